import { sql } from "drizzle-orm";
import { check, integer, jsonb, pgTable, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, uuidPk } from "./_columns.ts";
import { collections } from "./collections.ts";

/**
 * An item of a collection: its values by field key (media as bare paths, links as page references) and
 * its position, unique within the collection (the listing's keyset and the order PUT rely on it).
 */
export const collectionItems = pgTable(
  "collection_items",
  {
    id: uuidPk(),
    collectionId: uuid("collection_id")
      .notNull()
      .references(() => collections.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    values: jsonb("values").notNull(),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("collection_items_collection_position_unique").on(t.collectionId, t.position),
    check("collection_items_position_nonnegative", sql`${t.position} >= 0`),
  ],
);
