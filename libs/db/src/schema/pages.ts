import { integer, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { sites } from "./sites.ts";

/** A page of a site: a path, a title and MDX content. */
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
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [unique("pages_site_path_unique").on(t.siteId, t.path)],
);
