import { pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./_columns.ts";
import { sites } from "./sites.ts";

/** A marketplace template: a gallery slug pointing at its live host site. */
export const templates = pgTable("templates", {
  slug: text("slug").primaryKey(),
  name: text("name").notNull(),
  description: text("description").notNull().default(""),
  siteId: uuid("site_id")
    .notNull()
    .references(() => sites.id, { onDelete: "cascade" }),
  status: text("status", { enum: ["approved", "withdrawn"] })
    .notNull()
    .default("approved"),
  createdAt: createdAt(),
});
