import { screenshotRenders } from "@site/db";
import type { Context } from "@site/domain/core";
import { sql } from "drizzle-orm";

/** Renders by where they stand, from the database: what the queue holds when it is in another process. */
export type RenderCounts = {
  /** Pending renders no daemon is working on. */
  waiting: number;
  /** Pending renders in a stage (film, compose, store). */
  active: number;
  /** Renders that failed (and were refunded) in the last `days`. */
  failed: number;
  days: number;
};

/** Counts renders by state: waiting, active, and failed within the last `days` (default 7). */
export async function countRenders(ctx: Context, opts: { days?: number } = {}): Promise<RenderCounts> {
  const days = opts.days ?? 7;
  const since = new Date(ctx.clock.now().getTime() - days * 86_400_000);
  const [row] = await ctx.db
    .select({
      waiting: sql<number>`count(*) filter (where ${screenshotRenders.status} = 'pending' and ${screenshotRenders.stage} is null)::int`,
      active: sql<number>`count(*) filter (where ${screenshotRenders.status} = 'pending' and ${screenshotRenders.stage} is not null)::int`,
      failed: sql<number>`count(*) filter (where ${screenshotRenders.status} = 'failed' and ${screenshotRenders.updatedAt} >= ${since.toISOString()}::timestamptz)::int`,
    })
    .from(screenshotRenders);
  return { waiting: row?.waiting ?? 0, active: row?.active ?? 0, failed: row?.failed ?? 0, days };
}
