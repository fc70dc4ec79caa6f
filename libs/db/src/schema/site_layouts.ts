import { integer, jsonb, pgTable, uuid } from "drizzle-orm/pg-core";
import { ts } from "./_columns.ts";
import { sites } from "./sites.ts";

/**
 * The layout (logo, navigation, footer) and styles (theme tokens) of a site. Media references are stored
 * as bare `/api/media/<key>` paths and internal links as `page:<id>` references; `version` is the ETag.
 */
export const siteLayouts = pgTable("site_layouts", {
  siteId: uuid("site_id")
    .primaryKey()
    .references(() => sites.id, { onDelete: "cascade" }),
  layout: jsonb("layout").notNull(),
  styles: jsonb("styles").notNull(),
  version: integer("version").notNull().default(1),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
