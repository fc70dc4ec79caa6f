import { and, eq, inArray, sql } from "drizzle-orm";
import {
  cloneSourceFiles,
  collectionItems,
  collections,
  mediaFiles,
  pages,
  siteLayouts,
  type Tx,
} from "@site/db";
import { type MediaRefBases, readMediaRef, siteOfKey } from "@site/domain/media";
import { isScanFailure, scanPage } from "./page_scan_pool.ts";
import { mediaRefsInText } from "./text_media.ts";

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
 * Records, inside the cloning transaction, the template host's library files that the clone's copied
 * content carries (clone_source_files, decision 0610): media references of page MDX (found by the parser,
 * as at write and read), of the layout and of collection items, to keys of the host that exist now. These
 * and the clone's own library are all the files the clone may use and get signed; nothing the host adds
 * later, or never put in its content, is ever the clone's.
 */
export async function recordCloneFiles(
  tx: Tx,
  bases: MediaRefBases,
  hostSiteId: string,
  siteId: string,
): Promise<void> {
  const keys = new Set<string>();
  const add = (key: string) => {
    if (siteOfKey(key) === hostSiteId) keys.add(key);
  };
  const addRef = (ref: string) => {
    const r = readMediaRef(bases, ref);
    if (r.kind !== "outside") add(r.key);
  };

  const copied = await tx.select({ content: pages.content }).from(pages).where(eq(pages.siteId, siteId));
  const scans = await Promise.all(
    copied
      .filter((p) => mayReferMedia(p.content))
      .map((p) =>
        scanPage(p.content, bases).catch((e: unknown) => {
          // Content the parser refuses is withheld from readers anyway: it carries nothing.
          if (isScanFailure(e)) return null;
          throw e;
        }),
      ),
  );
  for (const scan of scans) if (scan?.ok) for (const r of scan.refs) add(r.key);

  const [layout] = await tx
    .select({ layout: siteLayouts.layout })
    .from(siteLayouts)
    .where(eq(siteLayouts.siteId, siteId));
  for (const s of stringsOf(layout?.layout)) for (const ref of mediaRefsInText(bases, s)) addRef(ref);

  const prefixes = ["/api/media/", ...bases.legacyPrefixes];
  const items = await tx
    .select({ values: collectionItems.values })
    .from(collectionItems)
    .innerJoin(collections, eq(collections.id, collectionItems.collectionId))
    .where(
      sql`${collections.siteId} = ${siteId}::uuid and (${sql.join(
        prefixes.map((p) => sql`strpos(${collectionItems.values}::text, ${p}) > 0`),
        sql` or `,
      )})`,
    );
  for (const item of items)
    for (const s of stringsOf(item.values)) for (const ref of mediaRefsInText(bases, s)) addRef(ref);

  if (keys.size === 0) return;
  const existing = await tx
    .select({ key: mediaFiles.key })
    .from(mediaFiles)
    .where(and(eq(mediaFiles.siteId, hostSiteId), inArray(mediaFiles.key, [...keys])));
  if (existing.length > 0)
    await tx
      .insert(cloneSourceFiles)
      .values(existing.map((f) => ({ siteId, key: f.key })))
      .onConflictDoNothing();
}
