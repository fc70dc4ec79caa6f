import { index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./_columns.ts";
import { organizations } from "./organizations.ts";
import { users } from "./users.ts";

/** An API key, stored as a SHA-256 hash of its secret, bound to one organization and its creator. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull().unique(),
    scopes: text("scopes").array().notNull(),
    createdAt: createdAt(),
    revokedAt: ts("revoked_at"),
  },
  (t) => [index("api_keys_org_idx").on(t.orgId)],
);

/** A dashboard session (cookie), used by the delivery route for bare media paths. */
export const userSessions = pgTable("user_sessions", {
  id: text("id").primaryKey(),
  userId: uuid("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  secretHash: text("secret_hash").notNull().unique(),
  expiresAt: ts("expires_at").notNull(),
  createdAt: createdAt(),
});
