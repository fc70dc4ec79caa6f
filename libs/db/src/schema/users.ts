import { pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";

/** A person who can create API keys and sign in. */
export const users = pgTable("users", {
  id: uuidPk(),
  email: text("email").notNull().unique(),
  createdAt: createdAt(),
});

/** A user's role in one organization: owner and admin may manage sites. */
export const memberships = pgTable(
  "memberships",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "admin", "editor", "viewer"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] })],
);
