import type { Principal } from "@site/domain/core";
import { waitUntilEnded } from "@site/domain/screenshots";
import {
  readDeliveryTry,
  retriedTryEnded,
  retryDelivery,
  type WebhookDeliveryView,
} from "@site/domain/webhooks";
import type { AppDeps } from "./deps.ts";

/**
 * Sends a delivery again now (retryDelivery) and, with `waitSeconds` > 0, waits on the process's one
 * LISTEN (work_ended, which the dispatcher sends as it settles a try) until that try ended or the time
 * is up (decision 1512); answers the delivery as it stands then, and whether that try ended. Shared by
 * REST and MCP.
 */
export async function retryDeliveryAndWait(
  deps: AppDeps,
  principal: Principal,
  webhookId: string,
  deliveryId: string,
  waitSeconds: number,
): Promise<{ answer: { accepted: true; delivery: WebhookDeliveryView }; ended: boolean }> {
  const { attempts } = await retryDelivery(deps, principal, webhookId, deliveryId);
  const state = await waitUntilEnded(
    deps.renderWaits,
    deliveryId,
    waitSeconds,
    () => readDeliveryTry(deps, principal, webhookId, deliveryId),
    (s) => !retriedTryEnded(s, attempts),
  );
  return { answer: { accepted: true, delivery: state.delivery }, ended: retriedTryEnded(state, attempts) };
}
