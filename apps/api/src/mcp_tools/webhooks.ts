import { Type } from "@sinclair/typebox";
import { ListQuery } from "@site/domain/core";
import { RENDER_WAIT_MAX_S } from "@site/domain/screenshots";
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
  WebhookDeleted,
  WebhookDeliveryPage,
  WebhookList,
  WebhookPatchBody,
  WebhookRecoverAnswer,
  WebhookRecoverBody,
  WebhookRetryAccepted,
  WebhookSecretAnswer,
} from "@site/domain/webhooks";
import { retryDeliveryAndWait } from "../webhook_waits.ts";
import { Cursor, Id } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

const WebhookId = Id("a webhook endpoint, from list_webhooks or create_webhook");

/** Webhook endpoints and their delivery log: the same models and domain functions as routes/webhooks.ts. */
export const WEBHOOK_TOOLS: Tool[] = [
  tool({
    name: "create_webhook",
    title: "Add a webhook endpoint",
    description:
      "Adds an https endpoint the service POSTs events to, signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The answer's secret (whsec_…) is shown only this once: keep it to verify signatures. Private or local addresses are refused; at most 20 endpoints per organization (CONFLICT). Needs webhooks:write.",
    operation: "createWebhook",
    output: WebhookCreated,
    input: Type.Object({
      ...WebhookCreateBody.properties,
      url: Type.String({ ...WebhookCreateBody.properties.url, maxLength: 2048, pattern: "^https?://" }),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const out = await createWebhook(deps, principal, args);
      return {
        value: out,
        note: `Endpoint ${out.webhook.id} added. Store its secret now (it is not shown again; rotate_webhook_secret makes a new one). list_webhook_deliveries shows each try.`,
      };
    },
  }),
  tool({
    name: "list_webhooks",
    title: "List webhook endpoints",
    description:
      "Lists the organization's webhook endpoints (url, events, enabled, and why the service disabled one). Needs webhooks:write.",
    operation: "listWebhooks",
    output: WebhookList,
    input: Type.Object({}),
    readOnly: true,
    run: async (deps, principal) => ({ value: { webhooks: await listWebhooks(deps, principal) } }),
  }),
  tool({
    name: "update_webhook",
    title: "Change a webhook endpoint",
    description:
      "Changes an endpoint's url, events, description or enabled. enabled: false fails its pending deliveries (recover_webhook_deliveries sends them again once enabled); enabled: true also clears why the service disabled it. Needs webhooks:write.",
    operation: "updateWebhook",
    output: WebhookAnswer,
    input: Type.Object({
      webhookId: WebhookId,
      ...WebhookPatchBody.properties,
      url: Type.Optional(
        Type.String({ ...WebhookCreateBody.properties.url, maxLength: 2048, pattern: "^https?://" }),
      ),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const { webhookId, ...body } = args;
      return { value: { webhook: await updateWebhook(deps, principal, webhookId, body) } };
    },
  }),
  tool({
    name: "delete_webhook",
    title: "Delete a webhook endpoint",
    description:
      "Deletes an endpoint and its delivery log; nothing more is sent to it. Needs webhooks:write.",
    operation: "deleteWebhook",
    output: WebhookDeleted,
    input: Type.Object({ webhookId: WebhookId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await deleteWebhook(deps, principal, args.webhookId);
      return {
        value: { deleted: true, webhookId: args.webhookId },
        note: `Endpoint ${args.webhookId} deleted; list_webhooks shows the others.`,
      };
    },
  }),
  tool({
    name: "rotate_webhook_secret",
    title: "Rotate a webhook's signing secret",
    description:
      "Makes a new signing secret, shown only in this answer; for 24 hours every try carries a signature with each secret, so the receiver can switch without losing one. Needs webhooks:write.",
    operation: "rotateWebhookSecret",
    output: WebhookSecretAnswer,
    input: Type.Object({ webhookId: WebhookId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const out = await rotateWebhookSecret(deps, principal, args.webhookId);
      return {
        value: out,
        note: `Store the new secret now; the previous one keeps verifying until ${out.previousSecretExpiresAt}.`,
      };
    },
  }),
  tool({
    name: "list_webhook_deliveries",
    title: "Read a webhook's delivery log",
    description:
      "The endpoint's deliveries, newest first: event, status (pending, delivered, failed), attempts, the last status code or error, the next try. Pass nextCursor back as cursor for the next page. Needs webhooks:write.",
    operation: "listWebhookDeliveries",
    output: WebhookDeliveryPage,
    input: Type.Object({ webhookId: WebhookId, ...ListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const { webhookId, ...page } = args;
      const out = await listDeliveries(deps, principal, webhookId, page);
      const failed = out.deliveries.filter((d) => d.status === "failed").length;
      return {
        value: out,
        ...(failed > 0
          ? {
              note: `${failed} failed deliveries on this page; once the receiver is fixed, recover_webhook_deliveries sends every failed one since a time again.`,
            }
          : {}),
      };
    },
  }),
  tool({
    name: "recover_webhook_deliveries",
    title: "Send failed webhook deliveries again",
    description:
      "After an outage of the receiver: every failed delivery of this endpoint created at or after `since` (ISO 8601, at most 14 days back) is tried again now, each with its own webhook-id as before. CONFLICT while the endpoint is disabled. Needs webhooks:write.",
    operation: "recoverWebhookDeliveries",
    output: WebhookRecoverAnswer,
    input: Type.Object({
      webhookId: WebhookId,
      since: Type.String({ ...WebhookRecoverBody.properties.since, maxLength: 64 }),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const { deliveries } = await recoverDeliveries(deps, principal, args.webhookId, args.since);
      return {
        value: { accepted: true, deliveries },
        note: `${deliveries} failed deliveries queued again; list_webhook_deliveries shows how they go.`,
      };
    },
  }),
  tool({
    name: "get_webhook",
    title: "Read one webhook endpoint",
    description:
      "One endpoint of the organization: url, events, description, enabled, and when and why the service disabled it (update_webhook with enabled: true turns it back on). Needs webhooks:write.",
    operation: "getWebhook",
    output: WebhookAnswer,
    input: Type.Object({ webhookId: WebhookId }),
    readOnly: true,
    run: async (deps, principal, args) => ({
      value: { webhook: await getWebhook(deps, principal, args.webhookId) },
    }),
  }),
  tool({
    name: "retry_webhook_delivery",
    title: "Send one webhook delivery again now",
    description:
      "Tries one delivery (from list_webhook_deliveries) again at once, whatever its state, with the same webhook-id, so the receiver can tell a repeat. The answer shows the delivery (status, attempts, lastStatusCode: the receiver's HTTP status, lastError). waitSeconds (0–25, default 0) waits on the server until that try ended (delivered; failed; or pending with nextAttemptAt after a failed try) or the time is up; without it the try happens in the background and list_webhook_deliveries shows its outcome. CONFLICT while the endpoint is disabled (update_webhook with enabled: true first). Needs webhooks:write.",
    operation: "retryWebhookDelivery",
    output: WebhookRetryAccepted,
    input: Type.Object({
      webhookId: WebhookId,
      deliveryId: Id("a delivery of the endpoint, from list_webhook_deliveries"),
      waitSeconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: RENDER_WAIT_MAX_S,
          description: "wait up to this long for the try to end",
        }),
      ),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const seconds = args.waitSeconds ?? 0;
      const { answer, ended } = await retryDeliveryAndWait(
        deps,
        principal,
        args.webhookId,
        args.deliveryId,
        seconds,
      );
      const d = answer.delivery;
      const tried = d.lastStatusCode === null ? (d.lastError ?? "no answer") : `HTTP ${d.lastStatusCode}`;
      return {
        value: answer,
        note: !ended
          ? seconds > 0
            ? `The try of delivery ${d.id} had not ended after ${seconds} s; list_webhook_deliveries shows how it goes (calling retry_webhook_delivery again would send it once more).`
            : `Delivery ${d.id} is queued to be tried now; list_webhook_deliveries shows how it went (with waitSeconds up to ${RENDER_WAIT_MAX_S}, this tool answers the try's outcome).`
          : d.status === "delivered"
            ? `Delivery ${d.id} delivered (${tried}, try ${d.attempts}); list_webhook_deliveries shows the log.`
            : d.status === "failed"
              ? `Delivery ${d.id} failed for good (${tried}); once the receiver is fixed, retry_webhook_delivery sends it again (recover_webhook_deliveries: every failed one since a time).`
              : `The try failed (${tried}); the next one is at ${d.nextAttemptAt}. list_webhook_deliveries shows how it goes.`,
      };
    },
  }),
];
