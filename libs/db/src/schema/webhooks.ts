import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, tsNoPrecision, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";

/**
 * A receiver of an organization's events (CONTRACT "Webhooks"). The signing secret is stored sealed
 * (AES-256-GCM under SECRET_KEY: it must be read back to sign); after a rotation the previous one keeps
 * signing beside it until `previous_secret_expires_at`. `failing_since` is the first failed try since
 * the last success; an endpoint failing for WEBHOOK_DISABLE_AFTER_S, or answering 410 Gone, is disabled
 * with `disabled_reason` and `disabled_at`.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    description: text("description"),
    enabled: boolean("enabled").notNull().default(true),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: ts("previous_secret_expires_at"),
    failingSince: ts("failing_since"),
    disabledReason: text("disabled_reason"),
    /** When it was disabled (any reason); null while enabled. */
    disabledAt: tsNoPrecision("disabled_at"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_endpoints_org_idx").on(t.orgId, t.createdAt)],
);

/**
 * One event, written in the same transaction as the change it reports (the outbox): `data` is the
 * resource as its GET answered it then.
 */
export const webhookEvents = pgTable(
  "webhook_events",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    data: jsonb("data").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("webhook_events_org_idx").on(t.orgId, t.createdAt)],
);

/**
 * One event to one endpoint. Its id is the `webhook-id` of every try. Pending rows whose
 * `next_attempt_at` has passed are claimed by a dispatcher (a lease: `lease_until`, `lease_token`); a
 * process that dies mid-send leaves the lease to run out and the row is claimed again.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: uuid("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: ts("next_attempt_at"),
    leaseUntil: ts("lease_until"),
    leaseToken: uuid("lease_token"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    index("webhook_deliveries_due_idx").on(t.endpointId, t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("webhook_deliveries_leased_idx")
      .on(t.orgId, t.leaseUntil)
      .where(sql`${t.status} = 'pending' and ${t.leaseUntil} is not null`),
    // Retention (decision 0845): an event's deliveries, and settled rows by when they settled.
    index("webhook_deliveries_event_idx").on(t.eventId),
    index("webhook_deliveries_settled_idx").on(t.updatedAt).where(sql`${t.status} <> 'pending'`),
  ],
);
