import { newsletterBounces, newsletterSubscribers } from "@site/db";
import { type Context, isUuid, notFound, type OwnedSite } from "@site/domain/core";
import { and, desc, eq, sql } from "drizzle-orm";
import type { BounceEntry, SubscriberView } from "./models.ts";

/** How far back soft bounces are counted against NEWSLETTER_SOFT_BOUNCE_LIMIT (as listmonk's bounce window). */
export const SOFT_BOUNCE_WINDOW_DAYS = 30;

/** How many entries of a subscriber's bounce log are shown (newest first). */
export const BOUNCE_LOG_SHOWN = 50;

/**
 * Records one report about a subscriber's mail (decision 1451) and applies it: `hard` bounces the
 * subscriber; `soft` bounces it once NEWSLETTER_SOFT_BOUNCE_LIMIT soft bounces fall within 30 days;
 * `policy` (the receiver refused us) changes no subscriber and counts on the campaign. Returns
 * whether the subscriber became `bounced`.
 */
export async function recordBounce(
  ctx: Context,
  entry: {
    subscriberId: string;
    campaignId: string | null;
    status: string;
    kind: "hard" | "soft" | "policy";
    diagnostic: string;
  },
): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    // The subscriber's row first: two reports at once count one after the other.
    const [sub] = await tx.execute<{ status: string; reactivated_at: string | null }>(sql`
      select status, reactivated_at from newsletter_subscribers where id = ${entry.subscriberId}::uuid for update`);
    if (!sub) return false;
    const now = ctx.clock.now();
    await tx.insert(newsletterBounces).values({
      subscriberId: entry.subscriberId,
      campaignId: entry.campaignId,
      at: now,
      status: entry.status.slice(0, 20),
      kind: entry.kind,
      diagnostic: entry.diagnostic.replace(/\s+/g, " ").trim().slice(0, 1000),
    });
    if (entry.kind === "policy" || sub.status === "bounced") return false;
    if (entry.kind === "soft") {
      const window = now.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000;
      const undone = sub.reactivated_at ? new Date(sub.reactivated_at).getTime() : 0;
      const since = new Date(Math.max(window, undone));
      const [{ n } = { n: 0 }] = await tx.execute<{ n: number }>(sql`
        select count(*)::int as n from newsletter_bounces
        where subscriber_id = ${entry.subscriberId}::uuid and kind = 'soft' and at > ${since.toISOString()}::timestamptz`);
      if (n < ctx.config.newsletter.softBounceLimit) return false;
    }
    const done = await tx.execute(sql`
      update newsletter_subscribers set status = 'bounced', bounced_at = now(), updated_at = now()
      where id = ${entry.subscriberId}::uuid and status <> 'bounced'`);
    return (done.count ?? 0) > 0;
  });
}

/** A subscriber's bounce log, newest first. */
export async function bounceLog(ctx: Context, subscriberId: string): Promise<BounceEntry[]> {
  const rows = await ctx.db
    .select()
    .from(newsletterBounces)
    .where(eq(newsletterBounces.subscriberId, subscriberId))
    .orderBy(desc(newsletterBounces.at), desc(newsletterBounces.id))
    .limit(BOUNCE_LOG_SHOWN);
  return rows.map((r) => ({
    at: r.at.toISOString(),
    status: r.status,
    kind: r.kind as BounceEntry["kind"],
    diagnostic: r.diagnostic,
  }));
}

/** One subscriber of the site with its bounce log; 404 for any other id. */
export async function getSubscriber(
  ctx: Context,
  site: OwnedSite,
  subscriberId: string,
  view: (r: typeof newsletterSubscribers.$inferSelect) => SubscriberView,
): Promise<SubscriberView & { bounces: BounceEntry[] }> {
  const siteId = site.id;
  if (!isUuid(subscriberId)) throw notFound("subscriber");
  const [r] = await ctx.db
    .select()
    .from(newsletterSubscribers)
    .where(and(eq(newsletterSubscribers.id, subscriberId), eq(newsletterSubscribers.siteId, siteId)));
  if (!r) throw notFound("subscriber");
  return { ...view(r), bounces: await bounceLog(ctx, r.id) };
}

/**
 * Makes a bounced subscriber active again (an admin's undo, as listmonk offers): the soft bounces
 * before it no longer count (the log keeps them). Any other status is answered as it is; 404 for
 * another site's.
 */
export async function reactivateSubscriber(
  ctx: Context,
  site: OwnedSite,
  subscriberId: string,
  view: (r: typeof newsletterSubscribers.$inferSelect) => SubscriberView,
): Promise<SubscriberView & { bounces: BounceEntry[] }> {
  const siteId = site.id;
  if (!isUuid(subscriberId)) throw notFound("subscriber");
  // reactivated_at: soft bounces before the undo no longer count towards the limit (the log keeps them).
  await ctx.db
    .update(newsletterSubscribers)
    .set({ status: "active", bouncedAt: null, reactivatedAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(newsletterSubscribers.id, subscriberId),
        eq(newsletterSubscribers.siteId, siteId),
        eq(newsletterSubscribers.status, "bounced"),
      ),
    );
  const shown = await getSubscriber(ctx, site, subscriberId, view);
  if (shown.status === "active") ctx.log.info("newsletter subscriber reactivated", { subscriberId });
  return shown;
}
