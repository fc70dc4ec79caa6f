import { collectionItems, collections, type Database, pages, siteLayouts, type Tx } from "@site/db";
import { isScanFailure, mediaRefsInText, scanPage } from "@site/domain/content";
import { type MediaRefBases, readMediaRef } from "@site/domain/media";
import { eq, sql } from "drizzle-orm";

/** Where a site's content names a library file: a page, the layout, or a collection item. */
export type ContentMediaRef =
  | { kind: "page"; id: string; path: string; key: string }
  | { kind: "layout"; key: string }
  | { kind: "collectionItem"; id: string; collectionId: string; key: string };

/** Every string inside a stored JSON value. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}

/** Whether MDX may hold a media reference at all: a path, an encoded one, or one split by a line break. */
function mayReferMedia(content: string): boolean {
  return /[&%\\]/.test(content) || content.replace(/[\t\r\n]/g, "").includes("media");
}

/**
 * Every media reference of a site's stored content, read the way readers see it: page MDX by the page
 * parser (as at write and at read; content the parser refuses is withheld from readers and carries
 * nothing), the layout's and collection items' strings by mediaRefsInText. Used to record what a
 * template clone carries (decision 0610) and to refuse deleting a file still in use (decision 0731).
 */
export async function contentMediaRefs(
  db: Tx | Database,
  bases: MediaRefBases,
  siteId: string,
): Promise<ContentMediaRef[]> {
  const out: ContentMediaRef[] = [];
  const keyOf = (ref: string) => {
    const r = readMediaRef(bases, ref);
    return r.kind === "outside" ? null : r.key;
  };

  const stored = await db
    .select({ id: pages.id, path: pages.path, content: pages.content })
    .from(pages)
    .where(eq(pages.siteId, siteId));
  const candidates = stored.filter((p) => mayReferMedia(p.content));
  const scans = await Promise.all(
    candidates.map((p) =>
      scanPage(p.content, bases).catch((e: unknown) => {
        if (isScanFailure(e)) return null;
        throw e;
      }),
    ),
  );
  scans.forEach((scan, i) => {
    const page = candidates[i]!;
    const seen = new Set<string>();
    if (scan?.ok)
      for (const r of scan.refs)
        if (!seen.has(r.key)) {
          seen.add(r.key);
          out.push({ kind: "page", id: page.id, path: page.path, key: r.key });
        }
  });

  const [layout] = await db
    .select({ layout: siteLayouts.layout })
    .from(siteLayouts)
    .where(eq(siteLayouts.siteId, siteId));
  const layoutKeys = new Set<string>();
  for (const s of stringsOf(layout?.layout))
    for (const ref of mediaRefsInText(bases, s)) {
      const key = keyOf(ref);
      if (key) layoutKeys.add(key);
    }
  for (const key of layoutKeys) out.push({ kind: "layout", key });

  const prefixes = ["/api/media/", ...bases.legacyPrefixes];
  const items = await db
    .select({
      id: collectionItems.id,
      collectionId: collectionItems.collectionId,
      values: collectionItems.values,
    })
    .from(collectionItems)
    .innerJoin(collections, eq(collections.id, collectionItems.collectionId))
    .where(
      sql`${collections.siteId} = ${siteId}::uuid and (${sql.join(
        prefixes.map((p) => sql`strpos(${collectionItems.values}::text, ${p}) > 0`),
        sql` or `,
      )})`,
    );
  for (const item of items) {
    const keys = new Set<string>();
    for (const s of stringsOf(item.values))
      for (const ref of mediaRefsInText(bases, s)) {
        const key = keyOf(ref);
        if (key) keys.add(key);
      }
    for (const key of keys)
      out.push({ kind: "collectionItem", id: item.id, collectionId: item.collectionId, key });
  }
  return out;
}
