import { index, integer, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { ts } from "./_columns.ts";
import { apiKeys } from "./api_keys.ts";
import { organizations } from "./organizations.ts";

/**
 * An `Idempotency-Key` of one API key (decision 0832): the request it was first used with (a hash) and,
 * once answered, the answer to give again for 24 hours. `in_flight` while its request runs, held by
 * `token` until `locked_until` (renewed while the request lives).
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    apiKeyId: text("api_key_id")
      .notNull()
      .references(() => apiKeys.id, { onDelete: "cascade" }),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["in_flight", "done"] }).notNull(),
    token: text("token"),
    lockedUntil: ts("locked_until"),
    responseStatus: integer("response_status"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string>>(),
    /**
     * The answer's body, sealed with SECRET_KEY (`v1.…`, AES-256-GCM; decision 1412), or base64 in rows
     * kept before that; null when the answer was not kept.
     */
    responseBody: text("response_body"),
    /** What the kept answer weighs (body and kept headers as sent): the organization's daily budget sums it. */
    answerBytes: integer("answer_bytes").notNull().default(0),
    /** Why a key's answer was not kept although its work was done (`too_large`, `org_budget`; decision 1410). */
    notKept: text("not_kept", { enum: ["too_large", "org_budget"] }),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.apiKeyId, t.key] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
    // Migration 0021 also INCLUDEs answer_bytes (an index-only sum), which Drizzle's builder cannot say.
    index("idempotency_keys_org_created_idx").on(t.orgId, t.createdAt),
  ],
);
