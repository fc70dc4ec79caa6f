import { pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { ts } from "./_columns.ts";
import { sites } from "./sites.ts";

/** A site's override of one chrome string (the words of its shell) in one locale. */
export const siteChromeStrings = pgTable(
  "site_chrome_strings",
  {
    siteId: uuid("site_id")
      .notNull()
      .references(() => sites.id, { onDelete: "cascade" }),
    locale: text("locale").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "site_chrome_strings_pk", columns: [t.siteId, t.locale, t.key] })],
);
