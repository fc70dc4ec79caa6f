import { type Static, Type } from "@sinclair/typebox";
import { named, PAGE_LIMIT, pageOf } from "@site/domain/core";
import { MAX_EMAIL_LENGTH } from "./emails.ts";

// One model per shape: the newsletter routes, the MCP tools and the TypeScript types all read these.

/** A subscriber's status. */
export const SUBSCRIBER_STATUSES = ["pending", "active", "unsubscribed", "bounced"] as const;
/** A subscriber's status. */
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];
/** A campaign's status. */
export const CAMPAIGN_STATUSES = ["draft", "scheduled", "sending", "paused", "sent", "cancelled"] as const;
/** A campaign's status. */
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** The most subscribers one import may carry (JSON items or CSV rows). */
export const MAX_IMPORT_ROWS = 10_000;
/** The longest CSV import, in bytes. */
export const MAX_CSV_BYTES = 2 * 1024 * 1024;
/** The longest campaign HTML body, in characters. */
export const MAX_CAMPAIGN_HTML = 512 * 1024;
/** The most addresses one test send may carry. */
export const MAX_TEST_RECIPIENTS = 10;

const Email = Type.String({
  minLength: 3,
  maxLength: MAX_EMAIL_LENGTH,
  description: "an e-mail address; stored trimmed and lowercased",
  error: "an e-mail address",
});
const Name = Type.String({ maxLength: 200, description: "at most 200 characters" });

const SubscriberStatusModel = Type.Union(
  [Type.Literal("pending"), Type.Literal("active"), Type.Literal("unsubscribed"), Type.Literal("bounced")],
  { error: SUBSCRIBER_STATUSES.join(", ") },
);
const CampaignStatusModel = Type.Union(
  [
    Type.Literal("draft"),
    Type.Literal("scheduled"),
    Type.Literal("sending"),
    Type.Literal("paused"),
    Type.Literal("sent"),
    Type.Literal("cancelled"),
  ],
  {
    description:
      "paused: the mail server refused something that is not about one recipient (the login, the sender, the message) or kept failing; nothing more is sent until POST …/resume, and `error` says why",
  },
);

/** A subscriber as the API shows it. */
export const SubscriberView = Type.Object({
  id: Type.String({ format: "uuid" }),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  status: SubscriberStatusModel,
  createdAt: Type.String({ format: "date-time" }),
  confirmedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  unsubscribedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  bouncedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  source: Type.Union([Type.String(), Type.Null()], {
    description:
      "where the consent came from: api (default for the API), form (the public form), import, or what the caller named",
  }),
  consentedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "when the consent was given (added through the API, or confirmed through the form)",
  }),
});
/** A subscriber as the API shows it. */
export type SubscriberView = Static<typeof SubscriberView>;

/** One report about a subscriber's mail: a refusal at RCPT TO or a delivery status notification. */
export const BounceEntry = Type.Object({
  at: Type.String({ format: "date-time" }),
  status: Type.String({ description: "the enhanced status code (RFC 3463), or the reply code without one" }),
  kind: Type.Union([Type.Literal("hard"), Type.Literal("soft"), Type.Literal("policy")], {
    description:
      "hard: the address is bad (5.1.x, 5.2.1); soft: try later (4.x.x, 5.2.2), NEWSLETTER_SOFT_BOUNCE_LIMIT within 30 days bounce it; policy: the receiver refused the sender (5.7.x), the subscriber is unchanged",
  }),
  diagnostic: Type.Union([Type.String(), Type.Null()]),
});
/** One report about a subscriber's mail. */
export type BounceEntry = Static<typeof BounceEntry>;

/** GET …/subscribers/<sid> and reactivate: the subscriber with its bounce log (newest first). */
export const SubscriberDetailAnswer = named(
  "SubscriberDetailAnswer",
  Type.Object({
    subscriber: Type.Intersect([SubscriberView, Type.Object({ bounces: Type.Array(BounceEntry) })]),
  }),
);

const AddStatus = Type.Optional(
  Type.Union([Type.Literal("active"), Type.Literal("pending")], {
    description:
      "active (default: the site owner vouches for consent) or pending (a double opt-in mail is sent). An address that unsubscribed or bounced keeps that status.",
    error: "active or pending",
  }),
);

/** Where a subscriber's consent came from, as the caller names it. */
const Source = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: "^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$",
    description: "where the consent came from (default api), e.g. shop-checkout or event-2026",
    error: "1 to 64 letters, digits, spaces or ._:/-",
  }),
);
const Confirm = Type.Optional(
  Type.Boolean({
    description:
      "true: added as pending and sent the confirmation mail, as the public form does (same as status: pending)",
  }),
);

/** POST …/subscribers with one address. */
export const AddSubscriberBody = Type.Object(
  { email: Email, name: Type.Optional(Name), status: AddStatus, source: Source, confirm: Confirm },
  { additionalProperties: false },
);
/** POST …/subscribers with one address. */
export type AddSubscriberBody = Static<typeof AddSubscriberBody>;

/** POST …/subscribers with many addresses (JSON import). */
export const ImportSubscribersBody = Type.Object(
  {
    subscribers: Type.Array(
      Type.Object({
        email: Type.Unknown({ description: "an e-mail address" }),
        name: Type.Optional(Type.Unknown()),
      }),
      { maxItems: MAX_IMPORT_ROWS, description: `at most ${MAX_IMPORT_ROWS} rows` },
    ),
    status: AddStatus,
  },
  { additionalProperties: false },
);
/** POST …/subscribers with many addresses (JSON import). */
export type ImportSubscribersBody = Static<typeof ImportSubscribersBody>;

/** POST …/subscribers with a CSV file (also what a `text/csv` body becomes). */
export const CsvImportBody = Type.Object(
  {
    csv: Type.String({
      maxLength: MAX_CSV_BYTES,
      description: "CSV whose first row names an email column (and optionally name); at most 2 MB",
    }),
    status: AddStatus,
  },
  { additionalProperties: false },
);

/**
 * POST …/subscribers, in one documented shape: exactly one of `email` (one subscriber, with `name`),
 * `subscribers` (a JSON import) or `csv` (a CSV import; a `text/csv` body arrives as this).
 */
export const SubscribersPostBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Name),
    subscribers: Type.Optional(ImportSubscribersBody.properties.subscribers),
    csv: Type.Optional(CsvImportBody.properties.csv),
    status: AddStatus,
    source: Source,
    confirm: Confirm,
  },
  {
    additionalProperties: false,
    description:
      "Exactly one of email (one subscriber, optionally with name), subscribers (a JSON import) or csv (a CSV import whose first row names an email column and optionally name; a text/csv body is read as this).",
  },
);
/** POST …/subscribers. */
export type SubscribersPostBody = Static<typeof SubscribersPostBody>;

/** The answer to one added subscriber. */
export const SubscriberAnswer = named("SubscriberAnswer", Type.Object({ subscriber: SubscriberView }));

/** The delete_subscriber tool's answer (REST answers 204 with no body). */
export const SubscriberDeleted = named(
  "SubscriberDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    subscriberId: Type.String({ format: "uuid", description: "the subscriber that is gone" }),
  }),
);

/** The add_subscriber tool's answer: REST's SubscriberAnswer, and what REST's 201-or-200 says. */
export const SubscriberAdded = named(
  "SubscriberAdded",
  Type.Intersect(
    [
      SubscriberAnswer,
      Type.Object({
        created: Type.Boolean({
          description: "true: a new address (REST 201); false: one already there (200)",
        }),
      }),
    ],
    { description: "the subscriber as REST answers it, and whether the address is new" },
  ),
);

/** The answer to an import: rows inserted, rows updated, rows refused (only with skipInvalid). */
export const ImportAnswer = Type.Object({
  imported: Type.Integer(),
  updated: Type.Integer(),
  invalid: Type.Array(Type.Object({ row: Type.Integer(), reason: Type.String() })),
});
/** The answer to an import. */
export type ImportAnswer = Static<typeof ImportAnswer>;

/** GET …/subscribers query. */
export const SubscriberListQuery = Type.Object({
  status: Type.Optional(SubscriberStatusModel),
  cursor: Type.Optional(Type.String({ description: "nextCursor from the previous page" })),
  limit: Type.Optional(
    Type.Integer({ minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default }),
  ),
});
/** GET …/subscribers query. */
export type SubscriberListQuery = Static<typeof SubscriberListQuery>;

/** A page of subscribers. */
export const SubscriberPage = named("SubscriberPage", pageOf("subscribers", SubscriberView));

/** POST /api/v1/public/sites/<slug>/subscribe. */
export const PublicSubscribeBody = Type.Object({ email: Email }, { additionalProperties: false });

/** Delivery counts of a campaign. */
export const CampaignCounts = Type.Object({
  queued: Type.Integer({ description: "waiting or being sent" }),
  sent: Type.Integer(),
  failed: Type.Integer({ description: "the recipient was deferred (4xx to its RCPT TO) through every try" }),
  bounced: Type.Integer({
    description:
      "refused for good: a 5xx to the recipient's RCPT TO, or a delivery status notification (5.x.x) that came back later",
  }),
  refusedByPolicy: Type.Integer({
    description:
      "reports (5.7.x) that a receiver refused the mail because of the sender (authentication, policy, reputation); no subscriber changed",
  }),
});
/** Delivery counts of a campaign. */
export type CampaignCounts = Static<typeof CampaignCounts>;

/** A campaign as the API shows it (html with member-signed media URLs). */
export const CampaignView = Type.Object({
  id: Type.String({ format: "uuid" }),
  subject: Type.String(),
  preheader: Type.Union([Type.String(), Type.Null()]),
  fromName: Type.Union([Type.String(), Type.Null()]),
  html: Type.String({ description: "media signed with member grants (k) at read; stored as bare paths" }),
  status: CampaignStatusModel,
  error: Type.Union([Type.String(), Type.Null()], {
    description: "why a paused campaign stopped: a sentence with the mail server's reply; null otherwise",
  }),
  sendAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  counts: CampaignCounts,
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
  startedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  finishedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});
/** A campaign as the API shows it. */
export type CampaignView = Static<typeof CampaignView>;

/** A campaign in a listing: no body. */
export const CampaignSummary = Type.Omit(CampaignView, ["html"]);
/** A campaign in a listing. */
export type CampaignSummary = Static<typeof CampaignSummary>;

const Subject = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "1 to 200 characters",
  error: "1 to 200 characters",
});
const Preheader = Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
  description: "the preview line mail clients show after the subject, at most 300 characters",
});
const FromName = Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
  description: "the sender's display name, at most 100 characters (the address is MAIL_FROM)",
});
const Html = Type.String({
  minLength: 1,
  maxLength: MAX_CAMPAIGN_HTML,
  description:
    "the mail's HTML; media as bare /api/media/<key> paths of the site's library (unknown files, displayUrls and outside images answer 400 listing each)",
});

/** POST …/campaigns. */
export const CreateCampaignBody = Type.Object(
  { subject: Subject, preheader: Type.Optional(Preheader), fromName: Type.Optional(FromName), html: Html },
  { additionalProperties: false },
);
/** POST …/campaigns. */
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

/** PATCH …/campaigns/<cid> (drafts only). */
export const UpdateCampaignBody = Type.Partial(CreateCampaignBody, { additionalProperties: false });
/** PATCH …/campaigns/<cid>. */
export type UpdateCampaignBody = Static<typeof UpdateCampaignBody>;

/** The delete_campaign tool's answer (REST answers 204 with no body). */
export const CampaignDeleted = named(
  "CampaignDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    campaignId: Type.String({
      format: "uuid",
      description: "the campaign that is gone (its mailed image links revoked)",
    }),
  }),
);

/** POST …/campaigns/<cid>/send. */
export const SendCampaignBody = Type.Object(
  {
    sendAt: Type.Optional(
      Type.String({
        format: "date-time",
        description: "ISO 8601 with offset; in the future (else 400); absent: now",
      }),
    ),
  },
  { additionalProperties: false },
);

/** POST …/campaigns/<cid>/test. */
export const TestCampaignBody = Type.Object(
  {
    to: Type.Array(Email, {
      minItems: 1,
      maxItems: MAX_TEST_RECIPIENTS,
      description: `1 to ${MAX_TEST_RECIPIENTS} addresses`,
    }),
  },
  { additionalProperties: false },
);

/** The answer of a test send (REST 202, send_test_campaign): accepted, mailed in the background. */
export const TestCampaignAccepted = named(
  "TestCampaignAccepted",
  Type.Object({
    accepted: Type.Literal(true),
    to: Type.Integer({ description: "how many addresses the test goes to" }),
  }),
);

/** One campaign. */
export const CampaignAnswer = named("CampaignAnswer", Type.Object({ campaign: CampaignView }));
/** A page of campaigns. */
export const CampaignPage = named("CampaignPage", pageOf("campaigns", CampaignSummary));
