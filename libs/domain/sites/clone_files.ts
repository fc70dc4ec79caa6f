import { cloneSourceFiles, mediaFiles, type Tx } from "@site/db";
import { type MediaRefBases, siteOfKey } from "@site/domain/media";
import { and, eq, inArray } from "drizzle-orm";
import { contentMediaRefs } from "./content_media.ts";

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
  for (const r of await contentMediaRefs(tx, bases, siteId))
    if (siteOfKey(r.key) === hostSiteId) keys.add(r.key);

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
