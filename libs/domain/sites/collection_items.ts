import { collectionItems, type Tx } from "@site/db";
import {
  afterPosition,
  type Context,
  checkInput,
  encodePositionCursor,
  isUuid,
  keysetPage,
  type ListQuery,
  notFound,
  type OwnedSite,
  PAGE_LIMIT,
} from "@site/domain/core";
import { and, asc, eq, gte, sql } from "drizzle-orm";
import { orderProblems, type Problem, refuse } from "./_input.ts";
import type { CollectionItem } from "./collection_model.ts";
import { ItemOrderBody, ItemValues } from "./collection_model.ts";
import { readValues, type StoredValues, storableValues } from "./collection_values.ts";
import { type CollectionRow, getCollection } from "./collections.ts";
import { loadPageIndex } from "./links.ts";
import { mediaSigner, type Reader } from "./site_media.ts";

/** The most items a collection may hold. */
export const MAX_ITEMS = 100_000;
// Moves go through a parking range above any real position, as pages do (decision 0606).
const PARKING = 1_000_000_000;

const itemColumns = {
  id: collectionItems.id,
  position: collectionItems.position,
  values: collectionItems.values,
  updatedAt: sql<string>`to_char(${collectionItems.updatedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
};
type ItemRow = { id: string; position: number; values: unknown; updatedAt: string };

/** What reading `rows` needs: the site's pages (only when a field is a link) and a media signer. */
async function readerFor(
  ctx: Context,
  siteId: string,
  collection: CollectionRow,
  reader: Reader,
  rows: ItemRow[],
) {
  const index = collection.fields.some((f) => f.type === "link") ? await loadPageIndex(ctx.db, siteId) : null;
  const images = collection.fields.filter((f) => f.type === "image").map((f) => f.key);
  const paths = rows.flatMap((r) =>
    images.map((k) => (r.values as StoredValues)[k]).filter((v): v is string => typeof v === "string"),
  );
  const sign = await mediaSigner(ctx, siteId, reader, paths);
  return (row: ItemRow): CollectionItem => ({
    id: row.id,
    position: row.position,
    values: readValues(row.values as StoredValues, collection.fields, index, sign),
    updatedAt: row.updatedAt,
  });
}

/**
 * A page of a collection's items in position order, keyset-paginated on the (unique) position, so every
 * page costs one index range scan however deep it is. Image values are signed for `reader`.
 */
export async function listItems(
  ctx: Context,
  site: OwnedSite,
  key: string,
  query: ListQuery,
  reader: Reader = "member",
): Promise<{ items: CollectionItem[]; nextCursor: string | null }> {
  const siteId = site.id;
  const limit = query.limit ?? PAGE_LIMIT.default;
  const collection = await getCollection(ctx, siteId, key);
  const rows = await ctx.db
    .select(itemColumns)
    .from(collectionItems)
    .where(
      and(
        eq(collectionItems.collectionId, collection.id),
        afterPosition(collectionItems.position, query.cursor),
      ),
    )
    .orderBy(asc(collectionItems.position))
    .limit(limit + 1);
  const { page, nextCursor } = keysetPage(rows, limit, (r) => r.position, encodePositionCursor);
  const view = await readerFor(ctx, siteId, collection, reader, page);
  return { items: page.map(view), nextCursor };
}

async function nextPosition(tx: Tx, collectionId: string): Promise<{ next: number; count: number }> {
  const [row] = await tx
    .select({
      next: sql<number>`coalesce(max(${collectionItems.position}) + 1, 0)::int`,
      count: sql<number>`count(*)::int`,
    })
    .from(collectionItems)
    .where(eq(collectionItems.collectionId, collectionId));
  return row ?? { next: 0, count: 0 };
}

/**
 * Writes items of a collection in one transaction, all or nothing: each entry without `id` is created
 * at the end, each with `id` has its values merged (null clears an optional field). Every wrong value is
 * named (`items.<n>.values.<field>` for several, `values.<field>` for one).
 */
export async function upsertItems(
  ctx: Context,
  site: OwnedSite,
  key: string,
  entries: { id?: string; values: Record<string, unknown> }[],
): Promise<CollectionItem[]> {
  const siteId = site.id;
  const index = await loadPageIndex(ctx.db, siteId);
  const written = await ctx.db.transaction(async (tx) => {
    // The collection row's lock serializes item writes with each other and with definition changes.
    const collection = await getCollection(ctx, siteId, key, tx);
    const fields = collection.fields;
    let { next, count } = await nextPosition(tx, collection.id);
    const out: ItemRow[] = [];
    const problems: Problem[] = [];
    for (const [i, entry] of entries.entries()) {
      const prefix = entries.length > 1 ? `items.${i}.` : "";
      let old: StoredValues = {};
      if (entry.id !== undefined) {
        const [row] = isUuid(entry.id)
          ? await tx
              .select({ values: collectionItems.values })
              .from(collectionItems)
              .where(and(eq(collectionItems.collectionId, collection.id), eq(collectionItems.id, entry.id)))
          : [];
        if (!row) throw notFound(`item ${entry.id}`);
        old = row.values as StoredValues;
      }
      const merged = { ...old, ...entry.values };
      const checked = await storableValues(ctx, { siteId, fields, index, prefix }, merged, entry.values);
      problems.push(...checked.problems);
      if (checked.problems.length) continue;
      if (entry.id === undefined && count++ >= MAX_ITEMS)
        throw refuse([{ field: "items", message: `a collection holds at most ${MAX_ITEMS} items` }]);
      const [row] =
        entry.id !== undefined
          ? await tx
              .update(collectionItems)
              .set({ values: checked.values, updatedAt: sql`now()` })
              .where(eq(collectionItems.id, entry.id))
              .returning(itemColumns)
          : await tx
              .insert(collectionItems)
              .values({ collectionId: collection.id, position: next++, values: checked.values })
              .returning(itemColumns);
      out.push(row!);
    }
    if (problems.length) throw refuse(problems);
    return { collection, rows: out };
  });
  const view = await readerFor(ctx, siteId, written.collection, "member", written.rows);
  return written.rows.map(view);
}

/** Creates an item at the end of a collection. */
export async function createItem(ctx: Context, site: OwnedSite, key: string, input: ItemValues) {
  const { values } = checkInput(ItemValues, input);
  const [item] = await upsertItems(ctx, site, key, [{ values }]);
  return item!;
}

/** Merges values into an item (null clears an optional field). */
export async function updateItem(
  ctx: Context,
  site: OwnedSite,
  key: string,
  itemId: string,
  input: ItemValues,
) {
  const { values } = checkInput(ItemValues, input);
  const [item] = await upsertItems(ctx, site, key, [{ id: itemId, values }]);
  return item!;
}

/** Deletes an item. */
export async function deleteItem(ctx: Context, site: OwnedSite, key: string, itemId: string): Promise<void> {
  const siteId = site.id;
  const collection = await getCollection(ctx, siteId, key);
  if (!isUuid(itemId)) throw notFound("item");
  const deleted = await ctx.db
    .delete(collectionItems)
    .where(and(eq(collectionItems.collectionId, collection.id), eq(collectionItems.id, itemId)))
    .returning({ id: collectionItems.id });
  if (deleted.length === 0) throw notFound("item");
}

/**
 * Puts a collection's items in the given order (positions 0..n-1), as one write. The ids must be exactly
 * the collection's items, each once; otherwise 400 naming the missing, unknown and repeated ids.
 */
export async function reorderItems(
  ctx: Context,
  site: OwnedSite,
  key: string,
  input: ItemOrderBody,
): Promise<CollectionItem[]> {
  const siteId = site.id;
  const ids = checkInput(ItemOrderBody, input).itemIds.map((id) => id.toLowerCase());
  const collection = await ctx.db.transaction(async (tx) => {
    const c = await getCollection(ctx, siteId, key, tx);
    const rows = await tx
      .select({ id: collectionItems.id })
      .from(collectionItems)
      .where(eq(collectionItems.collectionId, c.id));
    const existing = new Set(rows.map((r) => r.id));
    const refused = orderProblems("itemIds", existing, ids, { unit: "item", whole: "the collection" });
    if (refused.length) throw refuse(refused);
    if (ids.length === 0) return c;
    await tx
      .update(collectionItems)
      .set({ position: sql`${collectionItems.position} + ${PARKING}` })
      .where(and(eq(collectionItems.collectionId, c.id), gte(collectionItems.position, 0)));
    // The ids were just checked to be this collection's items, so the array literal holds UUIDs only.
    await tx.execute(sql`
      update collection_items set position = (o.n - 1)::int
      from unnest(${`{${ids.join(",")}}`}::uuid[]) with ordinality as o(id, n)
      where collection_items.id = o.id and collection_items.collection_id = ${c.id}::uuid`);
    return c;
  });
  const rows = await ctx.db
    .select(itemColumns)
    .from(collectionItems)
    .where(eq(collectionItems.collectionId, collection.id))
    .orderBy(asc(collectionItems.position));
  const view = await readerFor(ctx, siteId, collection, "member", rows);
  return rows.map(view);
}
