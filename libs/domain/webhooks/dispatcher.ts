import { type ChannelWatch, watchChannel } from "@site/db";
import type { Context } from "@site/domain/core";
import type { Consumer, JobQueue } from "@site/queue";
import { sql } from "drizzle-orm";
import { deliverWebhook } from "./deliver.ts";
import { WEBHOOK_NOTIFY_CHANNEL } from "./events.ts";
import { purgeOldWebhookRows } from "./retention.ts";

/** What the dispatcher runs on: the context and the job queue. */
export type DispatchContext = Context & { queue: JobQueue };

/** Namespace of the advisory lock that makes one claim pass at a time, across every process. */
const CLAIM_LOCK = 841;

/** How often a dispatcher deletes what is past WEBHOOK_RETENTION_S (at its start, then hourly). */
export const WEBHOOK_PURGE_EVERY_MS = 3_600_000;

/** A claimed delivery: its id, the lease it was claimed with, its try number. */
export type ClaimedDelivery = { id: string; lease_token: string; attempts: number };

/**
 * Claims up to `limit` due deliveries (decision 0841): pending, `next_attempt_at` passed, not leased
 * (or their lease ran out: the process sending them died), of enabled endpoints, at most
 * WEBHOOK_ENDPOINT_CONCURRENCY per endpoint and WEBHOOK_ORG_CONCURRENCY per organization in flight
 * counting the leases already held anywhere, endpoints of one organization taken in turn. Rows are
 * locked FOR UPDATE SKIP LOCKED and leased (WEBHOOK_LEASE_MS, a fresh token, the try counted) in one
 * statement, under a transaction-scoped advisory lock so two claimers cannot both fill one cap. "Due"
 * is reckoned on `ctx.clock`, as settling a try reckons the next one (decision 1401); leases, which
 * say whether a process is alive, on the database's clock.
 */
export async function claimDueDeliveries(ctx: Context, limit: number): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const cfg = ctx.config.webhooks;
  const now = ctx.clock.now().toISOString();
  return ctx.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`);
    const rows = await tx.execute<ClaimedDelivery>(sql`
      with busy as (
        select org_id, endpoint_id from webhook_deliveries
        where status = 'pending' and lease_until > now()
      ),
      org_busy as (select org_id, count(*)::int as n from busy group by org_id),
      ep_busy as (select endpoint_id, count(*)::int as n from busy group by endpoint_id),
      cand as (
        select d.id, d.org_id, d.endpoint_id, d.next_attempt_at,
          row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rn_ep
        from webhook_endpoints w
        cross join lateral (
          select x.id, x.org_id, x.endpoint_id, x.next_attempt_at from webhook_deliveries x
          where x.endpoint_id = w.id and x.status = 'pending' and x.next_attempt_at <= ${now}::timestamptz
            and (x.lease_until is null or x.lease_until <= now())
          order by x.next_attempt_at, x.id
          limit ${cfg.endpointConcurrency}
          for update of x skip locked
        ) d
        where w.enabled
      ),
      ep_ok as (
        select c.id, c.org_id, c.next_attempt_at,
          row_number() over (partition by c.org_id order by c.rn_ep, c.next_attempt_at, c.id) as rn_org
        from cand c left join ep_busy eb on eb.endpoint_id = c.endpoint_id
        where c.rn_ep + coalesce(eb.n, 0) <= ${cfg.endpointConcurrency}
      ),
      picked as (
        select e.id from ep_ok e left join org_busy ob on ob.org_id = e.org_id
        where e.rn_org + coalesce(ob.n, 0) <= ${cfg.orgConcurrency}
        order by e.next_attempt_at, e.id
        limit ${limit}
      )
      update webhook_deliveries d
      set lease_until = now() + ${`${cfg.leaseMs} milliseconds`}::interval,
        lease_token = gen_random_uuid(), attempts = d.attempts + 1, updated_at = now()
      from picked where d.id = picked.id
      returning d.id, d.lease_token, d.attempts`);
    return [...rows];
  });
}

/** When the next pending delivery falls due (null: none pending). */
async function nextDueAt(ctx: Context): Promise<Date | null> {
  const [row] = await ctx.db.execute<{ at: string | null }>(sql`
    select min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at)))::text as at
    from webhook_deliveries where status = 'pending'`);
  return row?.at ? new Date(row.at) : null;
}

/** A running dispatcher. */
export type WebhookDispatcher = {
  /** Claims what is due now (after a commit that recorded events, when no notice can reach us). */
  kick(): void;
  /** Stops claiming, lets tries in flight finish within `graceMs`, stops listening. */
  stop(opts?: { graceMs?: number }): Promise<void>;
};

// One dispatcher per queue in a process: the API and the daemon of ./scripts/start share one
// in-process queue and must not both consume it.
const running = new WeakMap<object, { dispatcher: WebhookDispatcher; users: number }>();

/**
 * Starts delivering webhooks from this process (decision 0841): a claim pass runs when PostgreSQL
 * announces a committed event (LISTEN, with `databaseUrl`), when a try ends, when the next retry falls
 * due, and every WEBHOOK_SWEEP_EVERY_MS; each pass claims as many due deliveries as this process has
 * free slots (WEBHOOK_CONCURRENCY) and queues one `webhook-delivery` job per claim (BullMQ with Redis:
 * any process may run it; in process otherwise). Nothing is kept in memory that the database does not
 * also hold: a process killed at any point leaves rows that the next pass (here or elsewhere) claims.
 * It also deletes settled deliveries and events past WEBHOOK_RETENTION_S, at start and hourly.
 */
export function startWebhookDispatcher(
  ctx: DispatchContext,
  opts: { databaseUrl?: string; fetchTls?: { ca?: string | string[] } } = {},
): WebhookDispatcher {
  const shared = running.get(ctx.queue);
  if (shared) {
    shared.users++;
    return shared.dispatcher;
  }
  const log = ctx.log.child({ app: "webhooks" });
  const cfg = ctx.config.webhooks;
  const pollMs = ctx.config.databaseListenPollMs;
  let stopped = false;
  let inFlight = 0;
  let passing: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const consumer: Consumer = ctx.queue.consume(
    "webhook-delivery",
    async (job) => {
      try {
        const r = await deliverWebhook(ctx, job.data, { fetchTls: opts.fetchTls });
        if (r.outcome !== "delivered" && r.outcome !== "skipped")
          log.info("webhook try failed", { jobId: job.id, deliveryId: job.data.deliveryId, ...r });
      } finally {
        inFlight = Math.max(0, inFlight - 1);
        kick();
      }
    },
    { concurrency: cfg.concurrency },
  );

  const pass = async () => {
    const claimed = await claimDueDeliveries(ctx, cfg.concurrency - inFlight);
    for (const c of claimed) {
      inFlight++;
      try {
        await ctx.queue.enqueue(
          "webhook-delivery",
          { deliveryId: c.id, leaseToken: c.lease_token },
          { jobId: `${c.id}.${c.attempts}` },
        );
      } catch (err) {
        inFlight--;
        // The queue is down: give the claim back so the next pass (or another process) takes it.
        await ctx.db
          .execute(sql`update webhook_deliveries set lease_until = null, lease_token = null,
            attempts = greatest(attempts - 1, 0)
            where id = ${c.id}::uuid and lease_token = ${c.lease_token}::uuid`)
          .catch(() => {});
        log.warn("could not queue a webhook try; it stays due", { deliveryId: c.id, cause: String(err) });
      }
    }
    // Wake up when the next retry (or an expired lease) falls due, at the latest at the sweep period
    // (at the poll interval while no NOTIFY can wake us).
    const due = await nextDueAt(ctx);
    const idleMs = watch?.live ? cfg.sweepEveryMs : Math.min(cfg.sweepEveryMs, pollMs);
    const waitMs = due ? Math.max(10, due.getTime() - ctx.clock.now().getTime() + 5) : idleMs;
    arm(Math.min(waitMs, idleMs));
  };

  const arm = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      kick();
    }, ms);
  };

  function kick(): void {
    if (stopped) return;
    if (passing) {
      again = true;
      return;
    }
    passing = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (err) {
          log.warn("webhook claim pass failed; retrying", { cause: String(err) });
          arm(Math.min(cfg.sweepEveryMs, 1000));
        }
      } while (again && !stopped);
    })().finally(() => {
      passing = null;
    });
  }

  // Without a working LISTEN (none configured, or its connection refused) the dispatcher polls every
  // DATABASE_LISTEN_POLL_MS instead, and says so once each time it starts polling (decision 1501).
  let polling = false;
  const startPolling = (reason: string, cause?: unknown) => {
    if (polling || stopped) return;
    polling = true;
    log.warn(`webhook dispatcher: LISTEN unavailable (${reason}); polling every ${pollMs} ms`, {
      pollMs,
      ...(cause ? { cause: String(cause) } : {}),
    });
    arm(pollMs);
  };
  let watch: ChannelWatch | null = null;
  if (opts.databaseUrl)
    watch = watchChannel(opts.databaseUrl, WEBHOOK_NOTIFY_CHANNEL, {
      onNotify: () => kick(),
      // Back after a lost connection: notices may have been missed, so look now.
      onLive: (live) => {
        if (!live) return;
        if (polling) log.info("webhook dispatcher: LISTEN active again; polling stops", { pollMs });
        polling = false;
        kick();
      },
      onError: (err) => startPolling("the LISTEN connection failed", err),
      appName: "site-content-api webhooks",
    });
  else startPolling("no LISTEN connection configured");
  kick();

  // Retention (decision 0845): at start, then every WEBHOOK_PURGE_EVERY_MS, apart from the claim passes.
  let purging: Promise<unknown> | null = null;
  const purge = () => {
    if (stopped || purging) return;
    purging = purgeOldWebhookRows(ctx)
      .then((r) => {
        if (r.deliveries + r.events > 0) log.info("old webhook deliveries and events deleted", r);
      })
      .catch((err) => log.warn("webhook retention sweep failed; next time", { cause: String(err) }))
      .finally(() => {
        purging = null;
      });
  };
  purge();
  const purgeTimer = setInterval(purge, WEBHOOK_PURGE_EVERY_MS);
  purgeTimer.unref?.();

  let stopping: Promise<void> | null = null;
  const dispatcher: WebhookDispatcher = {
    kick,
    stop(stopOpts = {}) {
      const entry = running.get(ctx.queue);
      if (entry && --entry.users > 0) return Promise.resolve();
      stopping ??= (async () => {
        running.delete(ctx.queue);
        stopped = true;
        if (timer) clearTimeout(timer);
        clearInterval(purgeTimer);
        await watch?.close();
        await passing?.catch(() => {});
        await purging;
        await consumer.close({ graceMs: stopOpts.graceMs ?? cfg.timeoutMs + 1000 });
      })();
      return stopping;
    },
  };
  running.set(ctx.queue, { dispatcher, users: 1 });
  return dispatcher;
}
