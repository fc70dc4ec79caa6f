import { sites } from "@site/db";
import type { Context } from "@site/domain/core";
import { inArray, lte } from "drizzle-orm";

/**
 * Purges sites deleted longer than SITE_DELETE_GRACE_S ago (decision 0730), at most `limit` a call:
 * their rows go by cascade (pages, library rows, campaigns…), which frees their slugs; their stored
 * objects are then claimed by no row, and the orphan walk of the media sweeper removes them. Their bytes
 * were given back to the quota when they were deleted. Returns how many were purged.
 */
export async function purgeDeletedSites(ctx: Context, limit = 100): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.limits.siteDeleteGraceS * 1000);
  const due = ctx.db.select({ id: sites.id }).from(sites).where(lte(sites.deletedAt, cutoff)).limit(limit);
  const gone = await ctx.db.delete(sites).where(inArray(sites.id, due)).returning({ id: sites.id });
  return gone.length;
}
