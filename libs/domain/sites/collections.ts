import { collectionItems, collections, type Tx } from "@site/db";
import { plainTextProblem } from "@site/domain/content";
import { type Context, checkInput, notFound, type OwnedSite } from "@site/domain/core";
import { and, asc, count, eq, sql } from "drizzle-orm";
import { type Problem, refuse } from "./_input.ts";
import { CollectionDefinition, type CollectionField, type CollectionSummary } from "./collection_model.ts";

/** The most collections a site may have. */
export const MAX_COLLECTIONS = 100;

const KEY = /^[a-z][a-z0-9-]{0,62}$/;

/** A collection's row: what item functions need. */
export type CollectionRow = { id: string; key: string; name: string; fields: CollectionField[] };

/** A collection key from a URL, or 404 (a key that cannot exist names no collection). */
function checkKey(key: string): string {
  if (!KEY.test(key)) throw notFound("collection");
  return key;
}

/** A collection of a site by key; 404 NOT_FOUND otherwise. With `tx`, its row is locked for the writer. */
export async function getCollection(
  ctx: Context,
  siteId: string,
  key: string,
  tx?: Tx,
): Promise<CollectionRow> {
  checkKey(key);
  const query = (tx ?? ctx.db)
    .select({ id: collections.id, key: collections.key, name: collections.name, fields: collections.fields })
    .from(collections)
    .where(and(eq(collections.siteId, siteId), eq(collections.key, key)));
  const [row] = tx ? await query.for("update") : await query;
  if (!row) throw notFound("collection");
  return { ...row, fields: row.fields as CollectionField[] };
}

/** The collections of a site with their item counts, by key. */
export async function listCollections(
  ctx: Context,
  site: OwnedSite,
): Promise<{ collections: CollectionSummary[] }> {
  const siteId = site.id;
  const rows = await ctx.db
    .select({
      key: collections.key,
      name: collections.name,
      fields: collections.fields,
      // Qualified by hand: inside a subquery Drizzle writes column names without their table.
      itemCount: sql<number>`(select count(*)::int from collection_items ci where ci.collection_id = "collections"."id")`,
    })
    .from(collections)
    .where(eq(collections.siteId, siteId))
    .orderBy(asc(collections.key));
  return { collections: rows.map((r) => ({ ...r, fields: r.fields as CollectionField[] })) };
}

function definitionProblems(def: CollectionDefinition): Problem[] {
  const problems: Problem[] = [];
  const name = plainTextProblem(def.name);
  if (name || def.name.trim() === "") problems.push({ field: "name", message: name ?? "required" });
  const seen = new Set<string>();
  def.fields.forEach((f, i) => {
    if (seen.has(f.key)) problems.push({ field: `fields.${i}.key`, message: `"${f.key}" is given twice` });
    seen.add(f.key);
  });
  return problems;
}

/** How many items a definition change would break, per field. */
async function breakingChanges(
  tx: Tx,
  collectionId: string,
  before: CollectionField[],
  after: CollectionField[],
): Promise<Problem[]> {
  const old = new Map(before.map((f) => [f.key, f]));
  const next = new Map(after.map((f) => [f.key, f]));
  const checks: { field: string; why: string; has: boolean }[] = [];
  for (const f of before) {
    const n = next.get(f.key);
    if (!n) checks.push({ field: f.key, why: "removing the field would drop their values", has: true });
    else if (n.type !== f.type)
      checks.push({ field: f.key, why: `their values are ${f.type}, not ${n.type}`, has: true });
  }
  for (const f of after) {
    if (f.required && !old.get(f.key)?.required)
      checks.push({ field: f.key, why: "they have no value for a now required field", has: false });
  }
  const problems: Problem[] = [];
  for (const c of checks) {
    const holds = sql`coalesce(${collectionItems.values} -> ${c.field}, 'null'::jsonb) <> 'null'::jsonb`;
    const [{ n }] = (await tx
      .select({ n: count() })
      .from(collectionItems)
      .where(and(eq(collectionItems.collectionId, collectionId), c.has ? holds : sql`not (${holds})`))) as [
      { n: number },
    ];
    if (n > 0)
      problems.push({ field: `fields.${c.field}`, items: n, message: `${n} item(s) would break: ${c.why}` });
  }
  return problems;
}

/**
 * Creates a collection or updates its definition. A change that existing items would break (a field
 * removed or retyped while items hold values for it, a field made required while items lack it) is a
 * 400 saying how many items, per field; nothing changes.
 */
export async function defineCollection(
  ctx: Context,
  site: OwnedSite,
  key: string,
  input: CollectionDefinition,
): Promise<CollectionSummary> {
  const siteId = site.id;
  if (!KEY.test(key))
    throw refuse([
      { field: "key", key, message: "lowercase letters, digits and hyphens, at most 63 characters" },
    ]);
  const def = checkInput(CollectionDefinition, input);
  const problems = definitionProblems(def);
  if (problems.length) throw refuse(problems);
  const fields = def.fields.map((f) => ({ key: f.key, type: f.type, required: f.required ?? false }));
  const update = async (tx: Tx): Promise<boolean> => {
    const [existing] = await tx
      .select({ id: collections.id, fields: collections.fields })
      .from(collections)
      .where(and(eq(collections.siteId, siteId), eq(collections.key, key)))
      .for("update");
    if (!existing) return false;
    const breaking = await breakingChanges(tx, existing.id, existing.fields as CollectionField[], fields);
    if (breaking.length) throw refuse(breaking);
    await tx
      .update(collections)
      .set({ name: def.name.trim(), fields, updatedAt: sql`now()` })
      .where(eq(collections.id, existing.id));
    return true;
  };
  await ctx.db.transaction(async (tx) => {
    if (await update(tx)) return;
    const [{ n }] = (await tx
      .select({ n: count() })
      .from(collections)
      .where(eq(collections.siteId, siteId))) as [{ n: number }];
    if (n >= MAX_COLLECTIONS)
      throw refuse([{ field: "key", message: `a site has at most ${MAX_COLLECTIONS} collections` }]);
    const inserted = await tx
      .insert(collections)
      .values({ siteId, key, name: def.name.trim(), fields })
      .onConflictDoNothing()
      .returning({ id: collections.id });
    // A concurrent PUT created it first: this one is then an update of that definition.
    if (inserted.length === 0) await update(tx);
  });
  const { collections: all } = await listCollections(ctx, site);
  return all.find((c) => c.key === key)!;
}

/** Deletes a collection and its items. */
export async function deleteCollection(ctx: Context, site: OwnedSite, key: string): Promise<void> {
  const siteId = site.id;
  checkKey(key);
  const deleted = await ctx.db
    .delete(collections)
    .where(and(eq(collections.siteId, siteId), eq(collections.key, key)))
    .returning({ id: collections.id });
  if (deleted.length === 0) throw notFound("collection");
}
