import { jsonb, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { sites } from "./sites.ts";

/** A collection of structured content of a site (team, products, posts): its key, name and fields. */
export const collections = pgTable(
  "collections",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    name: text("name").notNull(),
    fields: jsonb("fields").notNull(),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [unique("collections_site_key_unique").on(t.siteId, t.key)],
);
