import type { Principal } from "@site/domain/core";
import { type SubscribedEndpoint, subscribedEndpoints, type WebhookEventType } from "@site/domain/webhooks";
import type { AppDeps } from "../deps.ts";

/** What a queueing tool adds when webhooks will report the outcome: a value field and a sentence. */
export type WebhookFollows = { webhooks?: SubscribedEndpoint[]; sentence: string };

/**
 * Whether the organization's webhooks will report how a queued job ends (decision 0844): the enabled
 * endpoints subscribed to `events`, and a sentence for the tool's note saying so (empty when none); the
 * URLs only for a key with webhooks:write (decision 1400).
 */
export async function webhookFollows(
  deps: AppDeps,
  principal: Principal,
  events: readonly WebhookEventType[],
): Promise<WebhookFollows> {
  const endpoints = await subscribedEndpoints(deps, principal, events);
  if (endpoints.length === 0) return { sentence: "" };
  // Where, for a key that may manage webhooks; how many (and for which events) for any other (decision 1400).
  const where = endpoints.every((e) => e.url)
    ? endpoints.map((e) => `${e.url} (${e.events.join(", ")})`).join("; ")
    : `${endpoints.length} endpoint${endpoints.length === 1 ? "" : "s"} of the organization (${[
        ...new Set(endpoints.flatMap((e) => e.events)),
      ].join(", ")})`;
  return {
    webhooks: endpoints,
    sentence: ` A signed webhook will follow when it ends: ${where}; the user's system is told without polling.`,
  };
}
