import type { Principal } from "@site/domain/core";
import { type SubscribedEndpoint, subscribedEndpoints, type WebhookEventType } from "@site/domain/webhooks";
import type { AppDeps } from "../deps.ts";

/** What a queueing tool adds when webhooks will report the outcome: a value field and a sentence. */
export type WebhookFollows = { webhooks?: SubscribedEndpoint[]; sentence: string };

/**
 * Whether the organization's webhooks will report how a queued job ends (decision 0844): the enabled
 * endpoints subscribed to `events`, and a sentence for the tool's note saying so (empty when none).
 */
export async function webhookFollows(
  deps: AppDeps,
  principal: Principal,
  events: readonly WebhookEventType[],
): Promise<WebhookFollows> {
  const endpoints = await subscribedEndpoints(deps, principal.orgId, events);
  if (endpoints.length === 0) return { sentence: "" };
  const where = endpoints.map((e) => `${e.url} (${e.events.join(", ")})`).join("; ");
  return {
    webhooks: endpoints,
    sentence: ` A signed webhook will follow when it ends: ${where}; the user's system is told without polling.`,
  };
}
