import { mediaFiles, mediaUploads, socialMedia } from "@site/db";
import { and, desc, eq, inArray, lte } from "drizzle-orm";
import type { MediaContext } from "./library.ts";
import { purgeDeletedSites } from "./site_purge.ts";
import { finalizeUpload } from "./upload.ts";

/** What one sweep did. */
export type MediaSweep = {
  /** Prepared uploads whose bytes had landed: now library files (or refused). */
  settled: number;
  /** Prepared uploads whose URL lapsed without bytes. */
  expired: number;
  /** Temporary files of transfers that never finished (a process killed mid-write). */
  tempRemoved: number;
  /**
   * Stored objects no row claims, site library and social library alike (a process killed between store
   * and row, a try whose second write failed and whose clean-up did not run).
   */
  orphansRemoved: number;
  /** Sites deleted longer than SITE_DELETE_GRACE_S ago, purged (decision 0730). */
  sitesPurged: number;
};

/**
 * How long a stored object may go without a row before the sweeper takes it for an orphan (an hour,
 * issue 38; decision 1421): far longer than any write between an object and its row.
 */
export const ORPHAN_GRACE_MS = 60 * 60_000;

/**
 * One pass of the media sweeper (decision 0803): settles prepared uploads whose bytes went straight to
 * the store (newest first, then the lapsed ones, which also expire), removes temporary files older than
 * the longest allowed transfer, and — when `orphans` — objects older than `orphanGraceMs` (by the
 * context's clock) that no row claims: under `site-media/` neither a library row nor a prepared upload,
 * under `social-media/` no social library row (decision 1421). Safe to run in several processes at once:
 * landing locks the upload row, a removal only touches what nothing claims.
 */
export async function sweepMedia(
  ctx: MediaContext,
  opts: { orphans?: boolean; orphanGraceMs?: number; limit?: number } = {},
): Promise<MediaSweep> {
  const out: MediaSweep = { settled: 0, expired: 0, tempRemoved: 0, orphansRemoved: 0, sitesPurged: 0 };
  const limit = opts.limit ?? 100;
  const now = ctx.clock.now();
  const recent = await ctx.db
    .select()
    .from(mediaUploads)
    .where(eq(mediaUploads.status, "prepared"))
    .orderBy(desc(mediaUploads.createdAt))
    .limit(limit);
  const lapsed = await ctx.db
    .select()
    .from(mediaUploads)
    .where(and(eq(mediaUploads.status, "prepared"), lte(mediaUploads.expiresAt, now)))
    .limit(limit);
  const seen = new Set<string>();
  for (const row of [...recent, ...lapsed]) {
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    if (await ctx.store.head(row.key)) {
      await finalizeUpload(ctx, row);
      out.settled++;
    } else if (row.expiresAt <= now) {
      const done = await ctx.db
        .update(mediaUploads)
        .set({ status: "expired" })
        .where(and(eq(mediaUploads.id, row.id), eq(mediaUploads.status, "prepared")))
        .returning({ id: mediaUploads.id });
      out.expired += done.length;
    }
  }
  const longest = Math.max(ctx.config.timeouts.uploadTransferMs, ctx.config.limits.importTimeoutMs);
  if (ctx.store.sweepTemporary)
    out.tempRemoved = await ctx.store.sweepTemporary(
      new Date(Date.now() - longest - Math.min(60_000, longest)),
    );
  // Before the orphan walk: a purged site's objects are orphans from now on.
  out.sitesPurged = await purgeDeletedSites(ctx, limit);
  if (opts.orphans) out.orphansRemoved = await sweepOrphans(ctx, opts.orphanGraceMs ?? ORPHAN_GRACE_MS);
  return out;
}

/** The keys among `keys` (all under one prefix) that a row claims. */
type Claims = (ctx: MediaContext, keys: string[]) => Promise<Set<string>>;

/** A site library object: claimed by its library row, or by an upload still prepared. */
const siteClaims: Claims = async (ctx, keys) => {
  const files = await ctx.db
    .select({ key: mediaFiles.key })
    .from(mediaFiles)
    .where(inArray(mediaFiles.key, keys));
  const pending = await ctx.db
    .select({ key: mediaUploads.key })
    .from(mediaUploads)
    .where(and(inArray(mediaUploads.key, keys), eq(mediaUploads.status, "prepared")));
  return new Set([...files, ...pending].map((r) => r.key));
};

/**
 * A social library object (uploads, generated images, derived JPEGs, clips and their posters): claimed by
 * its row while prepared or ready; a rejected upload's bytes are no one's.
 */
const socialClaims: Claims = async (ctx, keys) => {
  const rows = await ctx.db
    .select({ key: socialMedia.key })
    .from(socialMedia)
    .where(and(inArray(socialMedia.key, keys), inArray(socialMedia.status, ["prepared", "ready"])));
  return new Set(rows.map((r) => r.key));
};

/** Where the orphan walk looks, and what claims an object there. */
const ORPHAN_PREFIXES: [string, Claims][] = [
  ["site-media/", siteClaims],
  ["social-media/", socialClaims],
];

/** Removes objects that no row claims, last written before the grace (by the context's clock). */
async function sweepOrphans(ctx: MediaContext, graceMs: number): Promise<number> {
  const before = ctx.clock.now().getTime() - graceMs;
  let removed = 0;
  for (const [prefix, claims] of ORPHAN_PREFIXES) {
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const keys = batch;
      batch = [];
      const claimed = await claims(ctx, keys);
      for (const key of keys) {
        if (claimed.has(key)) continue;
        await ctx.store.delete(key);
        ctx.log.warn("removed an orphaned object", { key });
        removed++;
      }
    };
    for await (const o of ctx.store.list(prefix)) {
      if (o.lastModified.getTime() > before) continue;
      batch.push(o.key);
      if (batch.length >= 500) await flush();
    }
    await flush();
  }
  return removed;
}

/**
 * Runs sweepMedia every `everyMs` (the orphan walk every `orphanEveryMs`), one pass at a time, and a first
 * pass at start. Failures are logged (a store or database outage): the next pass tries again.
 */
export function startMediaSweeper(
  ctx: MediaContext,
  opts: { everyMs: number; orphanEveryMs?: number; orphanGraceMs?: number; onPass?: (s: MediaSweep) => void },
): { stop(): Promise<void>; runNow(orphans?: boolean): Promise<MediaSweep> } {
  let running: Promise<MediaSweep> | null = null;
  let lastOrphans = 0;
  const orphanEvery = opts.orphanEveryMs ?? 10 * 60_000;
  const pass = (orphans = Date.now() - lastOrphans >= orphanEvery): Promise<MediaSweep> => {
    if (running) return running;
    if (orphans) lastOrphans = Date.now();
    running = sweepMedia(ctx, { orphans, orphanGraceMs: opts.orphanGraceMs })
      .then((r) => {
        if (r.settled || r.expired || r.tempRemoved || r.orphansRemoved || r.sitesPurged)
          ctx.log.info("media sweep", r);
        opts.onPass?.(r);
        return r;
      })
      .catch((err) => {
        ctx.log.warn("media sweep failed", { cause: String(err) });
        return { settled: 0, expired: 0, tempRemoved: 0, orphansRemoved: 0, sitesPurged: 0 };
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
  const timer = opts.everyMs > 0 ? setInterval(() => void pass(), opts.everyMs) : null;
  timer?.unref?.();
  if (opts.everyMs > 0) void pass(false);
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
    runNow: (orphans = true) => pass(orphans),
  };
}
