import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  date,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  unique,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";
import { sites } from "./sites.ts";

/** A newsletter subscriber of a site: one row per normalised address. */
export const newsletterSubscribers = pgTable(
  "newsletter_subscribers",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    name: text("name"),
    /** pending (double opt-in mail sent), active, unsubscribed, bounced. */
    status: text("status").notNull(),
    /** When the last confirmation mail went out (the per-address resend limit reads it). */
    confirmSentAt: ts("confirm_sent_at"),
    confirmedAt: ts("confirmed_at"),
    unsubscribedAt: ts("unsubscribed_at"),
    bouncedAt: ts("bounced_at"),
    /** Where the consent came from: `api`, `form` (the public form), `import`, or what the API caller named. */
    source: text("source"),
    /** When the consent was given (added through the API, or confirmed through the form). */
    consentedAt: ts("consented_at"),
    /** When an admin last made a bounced subscriber active again (soft bounces before it no longer count). */
    reactivatedAt: ts("reactivated_at"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    unique("newsletter_subscribers_site_email_unique").on(t.siteId, t.email),
    index("newsletter_subscribers_site_created_idx").on(t.siteId, t.createdAt, t.id),
    check(
      "newsletter_subscribers_status_check",
      sql`${t.status} in ('pending', 'active', 'unsubscribed', 'bounced')`,
    ),
  ],
);

/** A newsletter campaign of a site: its draft (bare media paths) and where its sending stands. */
export const newsletterCampaigns = pgTable(
  "newsletter_campaigns",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    subject: text("subject").notNull(),
    preheader: text("preheader"),
    fromName: text("from_name"),
    html: text("html").notNull(),
    /** draft, scheduled, sending, paused (the relay refused: `error`), sent, cancelled. */
    status: text("status").notNull().default("draft"),
    /** Why a paused campaign stopped: a sentence with the mail server's reply. */
    error: text("error"),
    /** How many times the campaign was resumed (delivery job ids carry it, so a resume queues afresh). */
    runs: integer("runs").notNull().default(0),
    /** Bumped to revoke every image link mailed for the campaign (campaign media tokens carry it). */
    mediaGeneration: integer("media_generation").notNull().default(0),
    sendAt: ts("send_at"),
    startedAt: ts("started_at"),
    finishedAt: ts("finished_at"),
    /** When the send job last fanned out deliveries (the sweeper re-runs it when it is old). */
    fannedOutAt: ts("fanned_out_at"),
    /** Paused because the relay could not be reached: the sweep resumes it once the relay answers (decision 1450). */
    resumeWhenReachable: boolean("resume_when_reachable").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("newsletter_campaigns_site_created_idx").on(t.siteId, t.createdAt, t.id),
    index("newsletter_campaigns_status_idx").on(t.status),
    check(
      "newsletter_campaigns_status_check",
      sql`${t.status} in ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled')`,
    ),
  ],
);

/**
 * One recipient of a campaign: claimed with a lease before its mail goes out and marked sent in the
 * same database before the message is committed to the SMTP server (decision 1102).
 */
export const newsletterRecipients = pgTable(
  "newsletter_recipients",
  {
    id: uuidPk(),
    campaignId: uuid("campaign_id")
      .notNull()
      .references(() => newsletterCampaigns.id, { onDelete: "cascade" }),
    subscriberId: uuid("subscriber_id").notNull(),
    email: text("email").notNull(),
    /** queued, sending (claimed, lease_until), sent, failed, bounced, skipped. */
    status: text("status").notNull().default("queued"),
    leaseUntil: ts("lease_until"),
    tries: integer("tries").notNull().default(0),
    lastError: text("last_error"),
    sentAt: ts("sent_at"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    // Named as PostgreSQL stored it: Drizzle's default name is 64 characters, one past the limit.
    foreignKey({
      name: "newsletter_recipients_subscriber_id_newsletter_subscribers_id_f",
      columns: [t.subscriberId],
      foreignColumns: [newsletterSubscribers.id],
    }).onDelete("cascade"),
    unique("newsletter_recipients_campaign_subscriber_unique").on(t.campaignId, t.subscriberId),
    index("newsletter_recipients_campaign_status_idx").on(t.campaignId, t.status),
    check(
      "newsletter_recipients_status_check",
      sql`${t.status} in ('queued', 'sending', 'sent', 'failed', 'bounced', 'skipped')`,
    ),
  ],
);

/** Test mails an organization sent on a day (UTC) to addresses that are not its members (decision 1114). */
export const newsletterTestSends = pgTable(
  "newsletter_test_sends",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    day: date("day").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.day] })],
);

/**
 * One report about a subscriber's mail (a refusal at RCPT TO, a delivery status notification), as
 * classified by reply_classes.ts: kept for the subscriber's bounce log, soft ones counted over 30 days.
 */
export const newsletterBounces = pgTable(
  "newsletter_bounces",
  {
    id: uuidPk(),
    subscriberId: uuid("subscriber_id")
      .notNull()
      .references(() => newsletterSubscribers.id, { onDelete: "cascade" }),
    campaignId: uuid("campaign_id").references(() => newsletterCampaigns.id, { onDelete: "set null" }),
    at: ts("at").notNull().defaultNow(),
    /** The enhanced status code (RFC 3463), or the reply code when there is none. */
    status: text("status").notNull(),
    /** hard (the address is bad), soft (try later), policy (the receiver refused us, not the address). */
    kind: text("kind").notNull(),
    diagnostic: text("diagnostic"),
  },
  (t) => [
    index("newsletter_bounces_subscriber_at_idx").on(t.subscriberId, t.at),
    index("newsletter_bounces_campaign_kind_idx").on(t.campaignId, t.kind),
    check("newsletter_bounces_kind_check", sql`${t.kind} in ('hard', 'soft', 'policy')`),
  ],
);

/** Values the processes share through the database, by name (the API's public base URL). */
export const serviceRecords = pgTable("service_records", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
