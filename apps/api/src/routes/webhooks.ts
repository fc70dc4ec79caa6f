import { ListQuery } from "@site/domain/core";
import { WaitQuery } from "@site/domain/screenshots";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  recoverDeliveries,
  rotateWebhookSecret,
  updateWebhook,
  WebhookAnswer,
  WebhookCreateBody,
  WebhookCreated,
  WebhookDeliveryPage,
  WebhookList,
  WebhookPatchBody,
  WebhookRecoverAnswer,
  WebhookRecoverBody,
  WebhookRetryAccepted,
  WebhookSecretAnswer,
} from "@site/domain/webhooks";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";
import { retryDeliveryAndWait } from "../webhook_waits.ts";

const SIGNING =
  "Each try is a POST of {type, timestamp, data} (data: the resource as its GET answers it) signed as Standard Webhooks: webhook-id (the delivery id, the same on every retry), webhook-timestamp, webhook-signature (v1,<base64 HMAC-SHA256>; two during a rotation's overlap).";

/** Webhooks (CONTRACT "Webhooks"): endpoints of the organization, their secrets and delivery logs. */
export function webhookRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .post(
      "/api/v1/webhooks",
      async ({ principal, body, set }) => {
        const out = await createWebhook(deps, principal, body);
        set.status = 201;
        return out;
      },
      {
        operation: "createWebhook",
        scope: "webhooks:write",
        body: WebhookCreateBody,
        response: { 201: WebhookCreated, ...errors(400, 409) },
        detail: {
          summary: "Add a webhook endpoint (its secret is shown once)",
          description: `The URL goes through the URL import's guard: https (plain http only to a FETCH_ALLOW_HOSTS host), no private or local address, no redirects followed; anything else is 400. ${SIGNING} Tries that fail (a 3xx included: redirects are not followed) are retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (WEBHOOK_RETRY_SCHEDULE_S); a 429 or 503 with Retry-After waits at least that, up to the longest step. A 410 Gone disables the endpoint at once, and so does failing for 5 days; the organization's endpoints subscribed to webhook.endpoint.disabled are told. At most 20 endpoints per organization (409).`,
          tags: ["webhooks"],
        },
      },
    )
    .get("/api/v1/webhooks", async ({ principal }) => ({ webhooks: await listWebhooks(deps, principal) }), {
      operation: "listWebhooks",
      scope: "webhooks:write",
      response: { 200: WebhookList },
      detail: { summary: "List the organization's webhook endpoints", tags: ["webhooks"] },
    })
    .get(
      "/api/v1/webhooks/:webhookId",
      async ({ principal, params }) => ({ webhook: await getWebhook(deps, principal, params.webhookId) }),
      {
        operation: "getWebhook",
        scope: "webhooks:write",
        response: { 200: WebhookAnswer, ...errors(404) },
        detail: { summary: "One webhook endpoint", tags: ["webhooks"] },
      },
    )
    .patch(
      "/api/v1/webhooks/:webhookId",
      async ({ principal, params, body }) => ({
        webhook: await updateWebhook(deps, principal, params.webhookId, body),
      }),
      {
        operation: "updateWebhook",
        scope: "webhooks:write",
        body: WebhookPatchBody,
        response: { 200: WebhookAnswer, ...errors(400, 404) },
        detail: {
          summary: "Change a webhook endpoint (url, events, enabled, description)",
          description:
            "enabled: false fails its pending deliveries (retry them once enabled again); enabled: true also clears the reason the service disabled it.",
          tags: ["webhooks"],
        },
      },
    )
    .delete(
      "/api/v1/webhooks/:webhookId",
      async ({ principal, params, set }) => {
        await deleteWebhook(deps, principal, params.webhookId);
        set.status = 204;
      },
      {
        operation: "deleteWebhook",
        scope: "webhooks:write",
        response: { 204: t.Void(), ...errors(404) },
        detail: { summary: "Delete a webhook endpoint and its delivery log", tags: ["webhooks"] },
      },
    )
    .post(
      "/api/v1/webhooks/:webhookId/rotate-secret",
      async ({ principal, params }) => rotateWebhookSecret(deps, principal, params.webhookId),
      {
        operation: "rotateWebhookSecret",
        scope: "webhooks:write",
        response: { 200: WebhookSecretAnswer, ...errors(404, 409) },
        detail: {
          summary: "Rotate the signing secret (the old one keeps verifying for 24 h)",
          description:
            "The new secret is shown once. For 24 hours every try carries two signatures in webhook-signature, one per secret, so a receiver verifying with either accepts it.",
          tags: ["webhooks"],
        },
      },
    )
    .get(
      "/api/v1/webhooks/:webhookId/deliveries",
      async ({ principal, params, query }) => listDeliveries(deps, principal, params.webhookId, query),
      {
        operation: "listWebhookDeliveries",
        scope: "webhooks:write",
        query: queryOf(ListQuery),
        response: { 200: WebhookDeliveryPage, ...errors(400, 404) },
        detail: {
          summary: "The endpoint's delivery log (newest first, cursor paging)",
          tags: ["webhooks"],
        },
      },
    )
    .post(
      "/api/v1/webhooks/:webhookId/deliveries/:deliveryId/retry",
      async ({ principal, params, query, set }) => {
        const { answer } = await retryDeliveryAndWait(
          deps,
          principal,
          params.webhookId,
          params.deliveryId,
          query.waitSeconds ?? 0,
        );
        set.status = 202;
        return answer;
      },
      {
        operation: "retryWebhookDelivery",
        scope: "webhooks:write",
        query: queryOf(WaitQuery),
        response: { 202: WebhookRetryAccepted, ...errors(400, 404, 409) },
        detail: {
          summary: "Send a delivery again now (same webhook-id)",
          description:
            "Pending, failed or delivered: the delivery is tried again at once; the answer shows it (status, attempts, lastStatusCode). With waitSeconds (at most 25) the answer comes when that try ended (delivered, failed, or pending with its next try after a failure) or the time is up, whichever is first. 409 while the endpoint is disabled.",
          tags: ["webhooks"],
        },
      },
    )
    .post(
      "/api/v1/webhooks/:webhookId/recover",
      async ({ principal, params, body, set }) => {
        const { deliveries } = await recoverDeliveries(deps, principal, params.webhookId, body.since);
        set.status = 202;
        return { accepted: true as const, deliveries };
      },
      {
        operation: "recoverWebhookDeliveries",
        scope: "webhooks:write",
        body: WebhookRecoverBody,
        response: { 202: WebhookRecoverAnswer, ...errors(400, 404, 409) },
        detail: {
          summary: "Send again every failed delivery since a time (after an outage)",
          description:
            "Every failed delivery of this endpoint created at or after `since` (ISO 8601, at most 14 days back, else 400) is tried again now, each with its own webhook-id as before; pending and delivered ones are left alone. Answers how many were queued. 409 while the endpoint is disabled: enable it first.",
          tags: ["webhooks"],
        },
      },
    );
}
