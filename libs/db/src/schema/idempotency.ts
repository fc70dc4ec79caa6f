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
    /** The answer's body, base64 (answers are JSON, but the bytes are kept exactly). */
    responseBody: text("response_body"),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.apiKeyId, t.key] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
  ],
);
