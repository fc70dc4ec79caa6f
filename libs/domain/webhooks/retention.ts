import type { Context } from "@site/domain/core";
import { sql } from "drizzle-orm";

/** Rows deleted per statement: short transactions, so a sweep never holds many locks at once. */
const BATCH = 1000;

/** What one retention sweep deleted. */
export type PurgeReport = { deliveries: number; events: number };

/**
 * Deletes what is past WEBHOOK_RETENTION_S (decision 0845): delivered and failed deliveries that settled
 * before the cutoff (a pending one is never deleted, however old), then events older than the cutoff
 * with no delivery left (theirs purged, or their endpoints deleted). In batches of 1,000, each its own
 * statement; safe to run in several processes at once (a row deleted by one is skipped by the other).
 */
export async function purgeOldWebhookRows(ctx: Context, opts: { now?: Date } = {}): Promise<PurgeReport> {
  const now = opts.now ?? ctx.clock.now();
  const cutoff = new Date(now.getTime() - ctx.config.webhooks.retentionS * 1000).toISOString();
  const report: PurgeReport = { deliveries: 0, events: 0 };
  for (;;) {
    const gone = await ctx.db.execute<{ id: string }>(sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries
        where status <> 'pending' and updated_at < ${cutoff}::timestamptz
        limit ${BATCH}
        for update skip locked)
      returning id`);
    report.deliveries += gone.length;
    if (gone.length < BATCH) break;
  }
  for (;;) {
    const gone = await ctx.db.execute<{ id: string }>(sql`
      delete from webhook_events where id in (
        select e.id from webhook_events e
        where e.created_at < ${cutoff}::timestamptz
          and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
        limit ${BATCH}
        for update of e skip locked)
      returning id`);
    report.events += gone.length;
    if (gone.length < BATCH) break;
  }
  return report;
}
