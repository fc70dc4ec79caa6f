import { type Context, decryptSecret } from "@site/domain/core";
import { sql } from "drizzle-orm";
import { PlatformLane } from "./lanes.ts";
import {
  type AdapterAccount,
  type MetricsReading,
  type PlatformAdapters,
  PlatformError,
  type SocialPlatform,
  STAGE_DELAYS_MS,
  STAGE_FINISHED,
  unavailableReading,
} from "./platform.ts";
import { needsRenewal, readyAccount } from "./tokens.ts";

/** How one collector pass behaves. */
export type CollectOptions = {
  /** The time the pass acts at (`--now`); default the context's clock. */
  now?: Date;
  /** Platform calls in flight at once, per platform. */
  concurrency?: number;
  /** Targets claimed (and locked) per transaction. */
  batchSize?: number;
  /** The longest retry-after the pass waits out; a longer one leaves the target for the next pass. */
  maxRetryWaitMs?: number;
  /** Attempts per target when the platform keeps answering 429. */
  maxAttempts?: number;
};

/** What a pass did. */
export type CollectReport = { claimed: number; captured: number; deferred: number; abandoned: number };

/** A target that keeps failing this long after publication is given up (7 days + 1 day of grace). */
const GIVE_UP_MS = STAGE_DELAYS_MS[3] + 86_400_000;

type DueRow = {
  id: string;
  platform: SocialPlatform;
  platform_post_id: string;
  url: string | null;
  published_at: string;
  next_stage: number;
  account_id: string;
  account_row: string;
  account_status: string;
  token_expires_at: string | null;
  display_name: string | null;
  token_ciphertext: string;
  permissions: string[];
  tier: string | null;
};

/** The stage a reading at `now` stands for: the latest stage already due (a missed one is taken late). */
export function stageDueAt(publishedAt: Date, now: Date): number {
  const age = now.getTime() - publishedAt.getTime();
  let stage = 0;
  for (let i = 0; i < STAGE_DELAYS_MS.length; i++) if (age >= STAGE_DELAYS_MS[i]!) stage = i + 1;
  return stage;
}

function dueCondition(now: Date) {
  const at = (i: number) => new Date(now.getTime() - STAGE_DELAYS_MS[i]!).toISOString();
  return sql`((t.next_stage = 1 and t.published_at <= ${at(0)}::timestamptz)
    or (t.next_stage = 2 and t.published_at <= ${at(1)}::timestamptz)
    or (t.next_stage = 3 and t.published_at <= ${at(2)}::timestamptz)
    or (t.next_stage = 4 and t.published_at <= ${at(3)}::timestamptz))`;
}

type Outcome = { id: string; reading: MetricsReading | null; stage: number; abandon: boolean };

/**
 * One collector pass: for every published target whose next stage is due, read its metrics through its
 * platform adapter and store the snapshot. Targets are claimed with FOR UPDATE SKIP LOCKED, so two
 * collectors split the work, and the snapshot insert ignores an existing (target, stage), so a stage is
 * never stored twice. One failing account or platform never stops the others.
 */
export async function captureDueSnapshots(
  ctx: Context,
  adapters: PlatformAdapters,
  opts: CollectOptions = {},
): Promise<CollectReport> {
  const now = opts.now ?? ctx.clock.now();
  const batchSize = opts.batchSize ?? 500;
  const lanes = new Map<string, PlatformLane>();
  const laneOf = (p: string) => {
    let lane = lanes.get(p);
    if (!lane) {
      lane = new PlatformLane(opts.concurrency ?? 16);
      lanes.set(p, lane);
    }
    return lane;
  };
  const report: CollectReport = { claimed: 0, captured: 0, deferred: 0, abandoned: 0 };
  // One renewal per account per pass, whatever the number of its targets (readyAccount locks the row).
  const renewals = new Map<string, Promise<AdapterAccount>>();
  const skip: string[] = [];
  for (;;) {
    const claimed = await ctx.db.transaction(async (tx) => {
      const rows = (await tx.execute(sql`
        select t.id, t.platform, t.platform_post_id, t.url, t.published_at::text as published_at, t.next_stage,
               a.account_id, a.id as account_row, a.status as account_status,
               a.token_expires_at::text as token_expires_at, a.display_name, a.token_ciphertext, a.permissions, a.tier
        from social_targets t join social_accounts a on a.id = t.account_id
        where t.status = 'published' and t.platform_post_id is not null and t.next_stage <= 4
          and ${dueCondition(now)} and not (t.id = any(${`{${skip.join(",")}}`}::uuid[]))
        order by t.published_at
        limit ${batchSize}
        for update of t skip locked`)) as unknown as DueRow[];
      if (rows.length === 0) return 0;
      const outcomes = await Promise.all(rows.map((row) => laneOf(row.platform).run(() => collectOne(row))));
      const done = outcomes.filter((o) => o.reading !== null);
      if (done.length > 0) {
        const snapshots = done.map((o) => ({
          target_id: o.id,
          stage: o.stage,
          views: o.reading!.views,
          likes: o.reading!.likes,
          comments: o.reading!.comments,
          shares: o.reading!.shares,
          saves: o.reading!.saves,
          extra: o.reading!.extra,
          captured_at: now.toISOString(),
        }));
        await tx.execute(sql`
          insert into social_snapshots (target_id, stage, views, likes, comments, shares, saves, extra, captured_at)
          select x.target_id, x.stage, x.views, x.likes, x.comments, x.shares, x.saves, coalesce(x.extra, '{}'::jsonb), x.captured_at
          from jsonb_to_recordset(${JSON.stringify(snapshots)}::jsonb) as x(target_id uuid, stage smallint,
            views integer, likes integer, comments integer, shares integer, saves integer, extra jsonb,
            captured_at timestamptz)
          on conflict (target_id, stage) do nothing`);
        // A target published with a pending id (decision 1015) gets the post's real id and address.
        const found = done.flatMap((o) =>
          o.reading!.found
            ? [{ id: o.id, platform_post_id: o.reading!.found.platformPostId, url: o.reading!.found.url }]
            : [],
        );
        if (found.length > 0)
          await tx.execute(sql`
            update social_targets t set platform_post_id = x.platform_post_id, url = x.url
            from jsonb_to_recordset(${JSON.stringify(found)}::jsonb) as x(id uuid, platform_post_id text, url text)
            where t.id = x.id`);
      }
      const moves = outcomes
        .filter((o) => o.reading !== null || o.abandon)
        .map((o) => ({ id: o.id, next_stage: o.abandon ? STAGE_FINISHED : o.stage + 1 }));
      if (moves.length > 0)
        await tx.execute(sql`
          update social_targets t set next_stage = x.next_stage
          from jsonb_to_recordset(${JSON.stringify(moves)}::jsonb) as x(id uuid, next_stage smallint)
          where t.id = x.id and t.next_stage < x.next_stage`);
      for (const o of outcomes) if (o.reading === null && !o.abandon) skip.push(o.id);
      report.captured += done.length;
      report.deferred += outcomes.filter((o) => o.reading === null && !o.abandon).length;
      report.abandoned += outcomes.filter((o) => o.abandon).length;
      return rows.length;
    });
    report.claimed += claimed;
    if (claimed === 0) break;
  }
  if (report.claimed > 0) ctx.log.info("social metrics pass", { at: now.toISOString(), ...report });
  return report;

  async function collectOne(row: DueRow): Promise<Outcome> {
    const publishedAt = new Date(row.published_at);
    const stage = Math.max(row.next_stage, stageDueAt(publishedAt, now));
    const adapter = adapters[row.platform];
    const giveUp = now.getTime() - publishedAt.getTime() >= GIVE_UP_MS;
    if (!adapter) return { id: row.id, stage, reading: null, abandon: giveUp };
    // An account whose refresh the platform refused (or that was disconnected) cannot read: say why.
    if (row.account_status !== "connected")
      return { id: row.id, stage, reading: unavailableReading("token_invalid"), abandon: false };
    let account: AdapterAccount;
    try {
      const expiresAt = row.token_expires_at ? new Date(row.token_expires_at) : null;
      if (adapter.renew && needsRenewal({ tokenExpiresAt: expiresAt }, now)) {
        let renewal = renewals.get(row.account_row);
        if (!renewal) {
          renewal = readyAccount(ctx, row.account_row, adapters, now);
          renewals.set(row.account_row, renewal);
        }
        account = await renewal;
      } else
        account = {
          platform: row.platform,
          accountId: row.account_id,
          displayName: row.display_name,
          accessToken: decryptSecret(ctx.config.secretKey, row.token_ciphertext),
          permissions: row.permissions,
          tier: row.tier,
        };
    } catch (err) {
      if (err instanceof PlatformError && err.kind !== "auth")
        return { id: row.id, stage, reading: null, abandon: giveUp };
      return { id: row.id, stage, reading: unavailableReading("token_invalid"), abandon: false };
    }
    const target = { platformPostId: row.platform_post_id, url: row.url, publishedAt };
    const attempts = opts.maxAttempts ?? 3;
    const maxWait = opts.maxRetryWaitMs ?? 120_000;
    const lane = laneOf(row.platform);
    for (let attempt = 1; ; attempt++) {
      // The platform asked us to wait longer than a pass may: leave the target for the next pass.
      if (lane.remainingPauseMs() > maxWait) return { id: row.id, stage, reading: null, abandon: giveUp };
      await lane.waitOutPause();
      try {
        return { id: row.id, stage, reading: await adapter.readMetrics(account, target), abandon: false };
      } catch (err) {
        const e = err instanceof PlatformError ? err : new PlatformError("transient", String(err));
        if (e.kind === "auth")
          return { id: row.id, stage, reading: unavailableReading("token_invalid"), abandon: false };
        if (e.kind === "permission")
          return { id: row.id, stage, reading: unavailableReading("permission_missing"), abandon: false };
        if (e.kind === "rejected")
          return {
            id: row.id,
            stage,
            reading: unavailableReading("platform_error", { error: e.message.slice(0, 300) }),
            abandon: false,
          };
        const wait = e.retryAfterMs ?? 1000;
        if (e.kind === "rate_limited") {
          lane.pause(wait);
          if (attempt < attempts) continue;
        }
        ctx.log.warn("social metrics read failed", {
          targetId: row.id,
          platform: row.platform,
          kind: e.kind,
        });
        return { id: row.id, stage, reading: null, abandon: giveUp };
      }
    }
  }
}
