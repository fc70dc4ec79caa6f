import { cloneSourceFiles, mediaFiles } from "@site/db";
import type { Context } from "@site/domain/core";
import { and, eq, inArray } from "drizzle-orm";

/**
 * Of `keys`, the library files that are this site's (decision 0610): files of its own library, and — for
 * a site cloned from a gallery template — the host's files that its copied content carried when it was
 * cloned (clone_source_files). No other file of the host counts, whether it was there at the clone, added
 * later or added after the template was withdrawn. The one answer to "may this site use this file": the
 * checks at write (pages, layout, collections, campaigns) and at signing (public and member reads, mail,
 * share tokens) all ask it.
 */
export async function filesOfSite(
  ctx: Pick<Context, "db">,
  siteId: string,
  keys: Iterable<string>,
): Promise<Set<string>> {
  const wanted = [...new Set(keys)];
  if (wanted.length === 0) return new Set();
  const own = ctx.db
    .select({ key: mediaFiles.key })
    .from(mediaFiles)
    .where(and(eq(mediaFiles.siteId, siteId), inArray(mediaFiles.key, wanted)));
  const carried = ctx.db
    .select({ key: cloneSourceFiles.key })
    .from(cloneSourceFiles)
    .where(and(eq(cloneSourceFiles.siteId, siteId), inArray(cloneSourceFiles.key, wanted)));
  const rows = await own.union(carried);
  return new Set(rows.map((r) => r.key));
}
