import { type Static, Type } from "@sinclair/typebox";
import { named, pageOf } from "@site/domain/core";

// One model per shape: the routes, the OpenAPI document and the TypeScript types read these.

/** Every event the service sends (CONTRACT "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  "screenshot.completed",
  "screenshot.failed",
  "clip.completed",
  "clip.failed",
  "media.created",
  "site.published",
  "social.post.published",
  "social.post.failed",
  "social.account.reconnect_required",
  "newsletter.campaign.sent",
  "newsletter.campaign.paused",
  "webhook.endpoint.disabled",
] as const;
/** An event's name. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An event name in a request. */
export const WebhookEventName = Type.Union(
  [
    Type.Literal("screenshot.completed"),
    Type.Literal("screenshot.failed"),
    Type.Literal("clip.completed"),
    Type.Literal("clip.failed"),
    Type.Literal("media.created"),
    Type.Literal("site.published"),
    Type.Literal("social.post.published"),
    Type.Literal("social.post.failed"),
    Type.Literal("social.account.reconnect_required"),
    Type.Literal("newsletter.campaign.sent"),
    Type.Literal("newsletter.campaign.paused"),
    Type.Literal("webhook.endpoint.disabled"),
  ],
  { description: "an event name" },
);

/** An endpoint as the API shows it (never its secret). */
export const WebhookView = Type.Object({
  id: Type.String({ format: "uuid" }),
  url: Type.String(),
  events: Type.Array(WebhookEventName),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description:
      "why it was disabled (the receiver answered 410 Gone, every try failed for WEBHOOK_DISABLE_AFTER_S, or PATCH enabled: false), or null while enabled",
  }),
  disabledAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "when it was disabled, or null while enabled",
  }),
  createdAt: Type.String({ format: "date-time" }),
});
/** An endpoint as the API shows it. */
export type WebhookView = Static<typeof WebhookView>;

const url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "https URL of the receiver (a FETCH_ALLOW_HOSTS host may be plain http); public addresses only, no redirects followed",
});
const events = Type.Array(WebhookEventName, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length });

/** The body of POST /api/v1/webhooks. */
export const WebhookCreateBody = Type.Object(
  { url, events, description: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
);
/** The body of POST /api/v1/webhooks. */
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;

/** The body of PATCH /api/v1/webhooks/<id>. */
export const WebhookPatchBody = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { additionalProperties: false },
);
/** The body of PATCH /api/v1/webhooks/<id>. */
export type WebhookPatchBody = Static<typeof WebhookPatchBody>;

const secret = Type.String({
  description: "whsec_<base64>: the signing secret (Standard Webhooks), shown only in this answer",
});

/** The answer of POST /api/v1/webhooks. */
export const WebhookCreated = named("WebhookCreated", Type.Object({ webhook: WebhookView, secret }));
/** The answer of POST /api/v1/webhooks/<id>/rotate-secret. */
export const WebhookSecretAnswer = named(
  "WebhookSecretAnswer",
  Type.Object({
    secret,
    previousSecretExpiresAt: Type.String({
      format: "date-time",
      description: "until then, tries carry a signature with the previous secret too",
    }),
  }),
);

/** One delivery in the log. */
export const WebhookDeliveryView = Type.Object({
  id: Type.String({ format: "uuid", description: "the webhook-id header of every try" }),
  event: WebhookEventName,
  status: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
  attempts: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  nextAttemptAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  createdAt: Type.String({ format: "date-time" }),
});
/** One delivery in the log. */
export type WebhookDeliveryView = Static<typeof WebhookDeliveryView>;

/** The answer of GET /api/v1/webhooks/<id>/deliveries. */
export const WebhookDeliveryPage = named("WebhookDeliveryPage", pageOf("deliveries", WebhookDeliveryView));

/**
 * An enabled endpoint that will be sent some of the events a queued job ends with (decision 0844); its
 * URL only for a key with webhooks:write (decision 1400).
 */
export const SubscribedEndpoint = named(
  "SubscribedEndpoint",
  Type.Object({
    id: Type.String({ format: "uuid" }),
    url: Type.Optional(
      Type.String({ description: "where it is; only for a key with webhooks:write (it may carry a token)" }),
    ),
    events: Type.Array(WebhookEventName, { description: "those of the job's events this endpoint takes" }),
  }),
);
/** The body of POST /api/v1/webhooks/<id>/recover. */
export const WebhookRecoverBody = Type.Object(
  {
    since: Type.String({
      format: "date-time",
      maxLength: 64,
      description:
        "ISO 8601 date-time, at most 14 days back: failed deliveries created since then are sent again",
    }),
  },
  { additionalProperties: false },
);
/** The body of POST /api/v1/webhooks/<id>/recover. */
export type WebhookRecoverBody = Static<typeof WebhookRecoverBody>;

/** The answer of POST /api/v1/webhooks/<id>/recover. */
export const WebhookRecoverAnswer = named(
  "WebhookRecoverAnswer",
  Type.Object({
    accepted: Type.Literal(true),
    deliveries: Type.Integer({ minimum: 0, description: "failed deliveries queued to be tried again" }),
  }),
);

/** An enabled endpoint that will be sent some of the events asked about. */
export type SubscribedEndpoint = Static<typeof SubscribedEndpoint>;

/**
 * What a queueing MCP tool adds to REST's answer: the endpoints that will be told how the job ends
 * (absent when none will be).
 */
export const WebhooksTold = named(
  "WebhooksTold",
  Type.Object({
    webhooks: Type.Optional(
      Type.Array(SubscribedEndpoint, {
        description: "the organization's webhooks that will be told how it ends; absent when none",
      }),
    ),
  }),
);

/** The answer of GET /api/v1/webhooks. */
export const WebhookList = named("WebhookList", Type.Object({ webhooks: Type.Array(WebhookView) }));
/** The answer of GET and PATCH /api/v1/webhooks/<id>. */
export const WebhookAnswer = named("WebhookAnswer", Type.Object({ webhook: WebhookView }));
/**
 * The answer of POST /api/v1/webhooks/<id>/deliveries/<deliveryId>/retry (retry_webhook_delivery): the
 * delivery as the log shows it when answering (with waitSeconds, once the try ended or the time is up).
 */
export const WebhookRetryAccepted = named(
  "WebhookRetryAccepted",
  Type.Object({
    accepted: Type.Literal(true, { description: "the delivery is queued to be tried again now" }),
    delivery: Type.Object(WebhookDeliveryView.properties, {
      description:
        "the delivery when answering: without waitSeconds still pending; with it, its try's outcome (delivered, failed, or pending with nextAttemptAt after a failed try) once the try ended, else pending",
    }),
  }),
);
/** The delete_webhook tool's answer (REST answers 204 with no body). */
export const WebhookDeleted = named(
  "WebhookDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    webhookId: Type.String({
      format: "uuid",
      description: "the endpoint that is gone, with its delivery log",
    }),
  }),
);
