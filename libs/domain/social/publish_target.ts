import { randomUUID } from "node:crypto";

import { DB_POOL_DEFAULTS } from "@site/config";
import { type Database, notifyWorkEnded, socialPosts, socialTargets } from "@site/db";

import { AppError } from "@site/domain/core";
import { and, eq, sql } from "drizzle-orm";
import { withPublisherDb } from "./db_gate.ts";
import { type PlatformAdapters, PlatformError, type PublishResult, type SocialPlatform } from "./platform.ts";
import { checkMedia, checkTexts, mediaForPlatform } from "./post_checks.ts";
import type { PostContext } from "./post_context.ts";
import type { RecordedOptions } from "./post_options.ts";
import { getSocialPost } from "./post_views.ts";
import { publishSlot, queuePublish } from "./publish_queue.ts";
import { retryTime } from "./rate_limit.ts";
import { readyAccount } from "./tokens.ts";
import { recordTargetEvent } from "./webhook_events.ts";

/** How long a claimed target is held by its process without a heartbeat (by the context's clock). */
export const PUBLISH_LEASE_MS = 120_000;
/** How often (real time) a process renews the lease of a target it is publishing. */
const HEARTBEAT_MS = 30_000;
/** The wait when a platform refuses for a rate limit without saying how long (decision 1472). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
/** A cut-off try's post is looked for from this long before the try began (clocks differ). */
const LOOKBACK_MS = 5 * 60_000;

type TargetRow = typeof socialTargets.$inferSelect;
type PostRow = typeof socialPosts.$inferSelect;
type Claimed = { target: TargetRow; post: PostRow; leaseToken: string };

/** What one publish job came to. */
export type PublishOutcome =
  | { outcome: "published" | "failed" | "waiting" | "lost" }
  | { outcome: "skipped"; why: "gone" | "ended" | "cancelled" | "busy" }
  | { outcome: "skipped"; why: "not_due"; dueInMs: number };

/**
 * Takes the target for this process: open, due by the clock, and not held by another live process. One
 * statement (one round trip, decision 1496) that locks the post row first, as PATCH, cancel and DELETE
 * do, takes a fresh lease and makes the post `publishing` under that lock; only a target not taken is
 * read again, to say why.
 */
async function claim(ctx: PostContext, targetId: string): Promise<Claimed | PublishOutcome> {
  const now = ctx.clock.now();
  const at = now.toISOString();
  const leaseToken = randomUUID();
  const until = new Date(now.getTime() + PUBLISH_LEASE_MS).toISOString();
  const taken = await ctx.db.execute<{ id: string }>(sql`
    with p as (
      select id, status from social_posts
      where id = (select post_id from social_targets where id = ${targetId}::uuid)
      for update),
    t as (
      update social_targets t set status = 'publishing', lease_token = ${leaseToken}::uuid,
        lease_until = ${until}::timestamptz, tries = t.tries + 1
      from p
      where t.id = ${targetId}::uuid and t.post_id = p.id and p.status <> 'cancelled'
        and t.status in ('scheduled', 'publishing')
        and (t.next_try_at is null or t.next_try_at <= ${at}::timestamptz)
        and (t.lease_until is null or t.lease_until <= ${at}::timestamptz)
      returning t.id, t.post_id),
    u as (
      update social_posts set status = 'publishing', updated_at = ${at}::timestamptz
      where id in (select post_id from t) and status = 'scheduled')
    select id from t`);
  const [[target], [row]] = await Promise.all([
    ctx.db.select().from(socialTargets).where(eq(socialTargets.id, targetId)),
    ctx.db
      .select()
      .from(socialPosts)
      .where(eq(socialPosts.id, sql`(select post_id from social_targets where id = ${targetId}::uuid)`)),
  ]);
  if (taken.length === 1 && target?.leaseToken === leaseToken && row)
    return { target, post: row.status === "scheduled" ? { ...row, status: "publishing" } : row, leaseToken };
  // Not taken: say why, from the rows as they are now.
  if (!target || !row) return { outcome: "skipped", why: "gone" } as const;
  if (target.status !== "scheduled" && target.status !== "publishing")
    return { outcome: "skipped", why: "ended" } as const;
  if (row.status === "cancelled") return { outcome: "skipped", why: "cancelled" } as const;
  if (target.nextTryAt && target.nextTryAt > now)
    return {
      outcome: "skipped",
      why: "not_due",
      dueInMs: target.nextTryAt.getTime() - now.getTime(),
    } as const;
  return { outcome: "skipped", why: "busy" } as const;
}

/** The publisher's database work, leaving connections to requests (db_gate.ts). */
const gated = <T>(ctx: PostContext, work: () => Promise<T>) =>
  withPublisherDb(ctx.db, ctx.config.dbPoolMax ?? DB_POOL_DEFAULTS.api, work);

const mine = (c: Claimed) =>
  and(eq(socialTargets.id, c.target.id), eq(socialTargets.leaseToken, c.leaseToken));

/** Ends the target (published or failed), with its webhook event and its post's state, in one commit. */
async function end(
  ctx: PostContext,
  c: Claimed,
  result: { published: PublishResult } | { failed: string },
): Promise<PublishOutcome> {
  const now = ctx.clock.now();
  const p = "published" in result ? result.published : null;
  const status = p ? "published" : "failed";
  const error = "failed" in result ? result.failed.slice(0, 500) : null;
  const ts = (d: Date | null | undefined) => (d ? d.toISOString() : null);
  const at = p ? sql`${p.publishedAt.toISOString()}::timestamptz` : null;
  // One statement ends the target (under its lease) and, once no other target is open, its post, and
  // counts the endpoints that want the event (decision 1496); the event is recorded only for those.
  const ended = await gated(ctx, () =>
    ctx.db.transaction(async (tx) => {
      const [row] = await tx.execute<{ ended: number; hooks: number }>(sql`
        with t as (
          update social_targets set status = ${status}, platform_post_id = ${p?.platformPostId ?? null},
            url = ${p?.url ?? null}, note = ${p?.note ?? null},
            published_at = ${ts(p?.publishedAt)}::timestamptz, error = ${error},
            next_try_at = null, try_started_at = null, lease_token = null, lease_until = null,
            ended_at = ${ts(now)}::timestamptz
          where id = ${c.target.id}::uuid and lease_token = ${c.leaseToken}::uuid
          returning id),
        p as (
          update social_posts set
            published_at = ${at ? sql`least(coalesce(published_at, ${at}), ${at})` : sql`published_at`},
            status = case when exists (select 1 from social_targets o where o.post_id = ${c.post.id}::uuid
              and o.id <> ${c.target.id}::uuid and o.status in ('scheduled', 'publishing'))
              then status else 'done' end,
            updated_at = ${ts(now)}::timestamptz
          where id = ${c.post.id}::uuid and exists (select 1 from t))
        select (select count(*) from t)::int as ended,
          (select count(*) from webhook_endpoints where org_id = ${c.post.orgId}::uuid and enabled
            and ${p ? "social.post.published" : "social.post.failed"} = any(events))::int as hooks`);
      if (!row?.ended) return false;
      // The outcome and its webhook event commit together (the outbox, decisions 0840, 0843), per target.
      if (row.hooks > 0)
        await recordTargetEvent(
          tx,
          c.post.orgId,
          { platform: c.target.platform, accountId: c.target.accountId, url: p?.url ?? null, status, error },
          () => getSocialPost({ ...ctx, db: tx as unknown as Database }, { orgId: c.post.orgId }, c.post.id),
        );
      // Wakes the post's waiters (get_social_post with waitSeconds) at commit, as a render's end does.
      await notifyWorkEnded(tx, c.post.id);
      return true;
    }),
  );
  if (!ended) return { outcome: "lost" };
  return { outcome: p ? "published" : "failed" };
}

/** Hands the target back to wait until `at` (a rate limit, a try to look up later), and queues that try. */
async function wait(
  ctx: PostContext,
  c: Claimed,
  at: Date,
  retryUntil: Date,
  why: string,
  keepTry: boolean,
): Promise<PublishOutcome> {
  const [t] = await gated(ctx, () =>
    ctx.db
      .update(socialTargets)
      .set({
        nextTryAt: at,
        retryUntil,
        error: why.slice(0, 500),
        leaseToken: null,
        leaseUntil: null,
        ...(keepTry ? {} : { tryStartedAt: null, platformPostId: null }),
      })
      .where(mine(c))
      .returning({ tries: socialTargets.tries }),
  );
  if (!t) return { outcome: "lost" };
  await queuePublish(
    ctx,
    c.target.id,
    t.tries,
    publishSlot(at, ctx.clock.now()),
    at.getTime() - ctx.clock.now().getTime(),
  );
  return { outcome: "waiting" };
}

/** Says why a try failed, in the platform's words. */
function words(platform: SocialPlatform, err: unknown): string {
  if (err instanceof PlatformError) return `${err.kind}: ${err.message}`;
  if (err instanceof AppError) return err.message;
  return `${platform}: the platform could not be reached`;
}

/**
 * Publishes one target (the `social-publish` job, decisions 1470–1472): claims it, looks on the platform
 * for the post of a try that was cut off after it may have reached it (never posting twice), checks the
 * post again as at creation, marks the try begun (committed), publishes, and commits the outcome with its
 * webhook event. A rate-limit refusal (PlatformError `rate_limited`, its `retryAfterMs`) waits what the
 * platform said within SOCIAL_PUBLISH_RETRY_WINDOW_S, staying `publishing`; past it the target fails with
 * the platform's words.
 */
export async function publishTarget(
  ctx: PostContext,
  adapters: PlatformAdapters,
  targetId: string,
): Promise<PublishOutcome> {
  const claimed = await gated(ctx, () => claim(ctx, targetId));
  if ("outcome" in claimed) return claimed;
  const c = claimed;
  const heartbeat = setInterval(() => {
    void ctx.db
      .update(socialTargets)
      .set({ leaseUntil: new Date(ctx.clock.now().getTime() + PUBLISH_LEASE_MS) })
      .where(mine(c))
      .catch(() => {});
  }, HEARTBEAT_MS);
  try {
    return await attempt(ctx, adapters, c);
  } finally {
    clearInterval(heartbeat);
  }
}

async function attempt(ctx: PostContext, adapters: PlatformAdapters, c: Claimed): Promise<PublishOutcome> {
  const { target, post } = c;
  const platform = target.platform as SocialPlatform;
  const adapter = adapters[platform];
  const overrides = post.platformOverrides as Record<string, string>;
  const text = overrides[platform] ?? post.content;
  const windowMs = ctx.config.social.publishRetryWindowS * 1000;
  let started = target.tryStartedAt !== null;
  // While a cut-off try is looked up, a rate limit or no answer keeps it to be looked up again.
  let lookingUp = false;
  try {
    if (!adapter) throw new PlatformError("rejected", `no adapter for ${platform}`);
    const account = await gated(ctx, () => readyAccount(ctx, target.accountId, adapters, ctx.clock.now()));
    if (target.tryStartedAt) {
      // A try began and never committed its outcome: it may have reached the platform (decision 1471).
      if (!adapter.findPublished)
        return end(ctx, c, {
          failed: `${platform}: a try begun at ${target.tryStartedAt.toISOString()} was cut off and ${platform} offers no way to look the post up; not tried again so as not to post twice (look at the account)`,
        });
      const since = new Date(target.tryStartedAt.getTime() - LOOKBACK_MS);
      lookingUp = true;
      let found: PublishResult | null;
      try {
        // A publishing target's platform_post_id is only ever the try's reference (onPublishRef).
        found = await adapter.findPublished(account, { text, since, ref: target.platformPostId });
      } catch (err) {
        // A lookup the platform refuses for good (a permission the account lacks, decision 1497) leaves
        // the cut-off try unknown: fail safely. No answer or a rate limit: look again later (below).
        if (err instanceof PlatformError && (err.kind === "transient" || err.kind === "rate_limited"))
          throw err;
        return end(ctx, c, {
          failed: `${platform}: a try begun at ${target.tryStartedAt.toISOString()} was cut off and could not be looked up on ${platform} (${words(platform, err)}); not tried again so as not to post twice (look at the account)`,
        });
      }
      if (found) return end(ctx, c, { published: found });
      lookingUp = false;
      started = false; // the platform has no such post: the cut-off try did not reach it
    }
    // Every check runs again at publish time (CONTRACT "Social posts on their own clock").
    checkTexts([platform], post.content, overrides);
    const media = await gated(ctx, () => checkMedia(ctx, post.orgId, [platform], post.media));
    const files = await mediaForPlatform(ctx, post.orgId, platform, media);
    const [marked] = await gated(ctx, () =>
      ctx.db
        .update(socialTargets)
        .set({ tryStartedAt: ctx.clock.now(), platformPostId: null })
        .where(mine(c))
        .returning({ id: socialTargets.id }),
    );
    const options = post.platformOptions as RecordedOptions;
    if (!marked) return { outcome: "lost" };
    started = true;
    const published = await adapter.publish(account, {
      text,
      media: files,
      onPublishRef: async (ref) => {
        await gated(ctx, () => ctx.db.update(socialTargets).set({ platformPostId: ref }).where(mine(c)));
      },
      ...(platform === "tiktok" && options.tiktok
        ? { tiktok: { privacyLevel: options.tiktok.privacyLevel } }
        : {}),
    });
    return end(ctx, c, { published });
  } catch (err) {
    ctx.log.warn("social publish try failed", { platform, targetId: target.id, cause: err });
    const now = ctx.clock.now();
    const until = target.retryUntil ?? new Date(now.getTime() + windowMs);
    if (err instanceof PlatformError && err.kind === "rate_limited") {
      // The platform refused the call and said (or not) how long to wait: nothing was posted by it (a
      // refused lookup keeps the cut-off try, to be looked up after the wait).
      const at = retryTime(err, now) ?? new Date(now.getTime() + DEFAULT_RATE_LIMIT_WAIT_MS);
      if (at <= until)
        return wait(
          ctx,
          c,
          at,
          until,
          `rate limited by ${platform}; trying again at ${at.toISOString()}`,
          lookingUp,
        );
      return end(ctx, c, {
        failed: `${words(platform, err)} (the wait ran past SOCIAL_PUBLISH_RETRY_WINDOW_S)`,
      });
    }
    const definite = err instanceof AppError || (err instanceof PlatformError && err.kind !== "transient");
    if (started && !definite) {
      // No answer, or a 5xx: the post may exist. Look it up before any new try, or say so.
      const at = new Date(now.getTime() + Math.min(600_000, 15_000 * 2 ** Math.max(0, target.tries - 1)));
      if (adapter?.findPublished && at <= until)
        return wait(ctx, c, at, until, `${words(platform, err)}; looking it up at ${at.toISOString()}`, true);
      return end(ctx, c, {
        failed: `${words(platform, err)}; the post may have been published, not tried again so as not to post twice`,
      });
    }
    return end(ctx, c, { failed: words(platform, err) });
  }
}
