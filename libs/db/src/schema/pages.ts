import { sql } from "drizzle-orm";
import { check, integer, jsonb, pgTable, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { sites } from "./sites.ts";

/**
 * A page of a site: a path, a title and MDX content. Internal links in the content are stored as
 * `page:<id>` references; `links` holds their source ranges (and those of site paths naming no page), so
 * reads translate them without parsing. Positions are unique within the site.
 */
export const pages = pgTable(
  "pages",
  {
    id: uuidPk(),
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    title: text("title").notNull(),
    content: text("content").notNull(),
    position: integer("position").notNull().default(0),
    links: jsonb("links").notNull().default([]),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    unique("pages_site_path_unique").on(t.siteId, t.path),
    uniqueIndex("pages_site_position_unique").on(t.siteId, t.position),
    check("pages_position_nonnegative", sql`${t.position} >= 0`),
  ],
);
