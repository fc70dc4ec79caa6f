import { sql } from "drizzle-orm";
import { bigint, check, integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, uuidPk } from "./_columns.ts";

/** An organization: the owner of sites, AI credits, storage quota and the site limit. */
export const organizations = pgTable(
  "organizations",
  {
    id: uuidPk(),
    name: text("name").notNull(),
    credits: integer("credits").notNull().default(0),
    storageQuotaBytes: bigint("storage_quota_bytes", { mode: "number" }).notNull(),
    storageUsedBytes: bigint("storage_used_bytes", { mode: "number" }).notNull().default(0),
    siteLimit: integer("site_limit").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    check("organizations_credits_nonnegative", sql`${t.credits} >= 0`),
    check("organizations_storage_nonnegative", sql`${t.storageUsedBytes} >= 0`),
  ],
);
