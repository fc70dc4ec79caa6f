import { sql } from "drizzle-orm";
import { boolean, index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { organizations } from "./organizations.ts";

/** A website of an organization; its slug is unique across all organizations. */
export const sites = pgTable(
  "sites",
  {
    id: uuidPk(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    slug: text("slug").notNull().unique(),
    publicContentLive: boolean("public_content_live").notNull().default(false),
    comingSoon: boolean("coming_soon").notNull().default(true),
    templateSlug: text("template_slug"),
    clonedFromSiteId: uuid("cloned_from_site_id"),
    /** The locale chrome strings fall back to before the built-in English (a BCP 47 tag). */
    defaultLocale: text("default_locale").notNull().default("en"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().default(sql`now()`),
    /**
     * Set when the site was deleted (soft delete, decision 0730): it answers 404 everywhere at once and
     * keeps its slug for SITE_DELETE_GRACE_S; after that it is purged (its rows and files) and the slug
     * is free again. Null for a live site.
     */
    deletedAt: ts("deleted_at"),
  },
  (t) => [
    index("sites_org_created_idx").on(t.orgId, t.createdAt, t.id),
    index("sites_deleted_idx").on(t.deletedAt).where(sql`${t.deletedAt} is not null`),
  ],
);
