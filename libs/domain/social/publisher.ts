import { socialPosts, socialTargets } from "@site/db";
import type { Consumer, JobQueue } from "@site/queue";
import { and, asc, eq, inArray, isNull, lte, ne, or } from "drizzle-orm";
import type { PlatformAdapters } from "./platform.ts";
import type { PostContext } from "./post_context.ts";
import { publishSlot, queuePublish, RESCUE_MS } from "./publish_queue.ts";
import { publishTarget } from "./publish_target.ts";

/**
 * Targets published at once by one process. A try mostly waits on the platform (50 ms to seconds), not
 * on this process: 8 capped a process at about 80 posts/s against a platform answering in 50 ms
 * (decision 1496).
 */
export const PUBLISH_CONCURRENCY = 32;
/** A sweep queues what falls due within this long, each job delayed to its time (lateness ≈ 0). */
const SWEEP_HORIZON_MS = 15_000;
/** At most this many targets are queued by one sweep (the next one takes the rest). */
const SWEEP_BATCH = 2000;
/** A job that finds its target due within this long (real time) waits for it instead of ending. */
const EARLY_WAIT_MS = 5_000;
/** Enqueues sent to the queue at once by a sweep (one Redis round trip each with BullMQ). */
const SWEEP_ENQUEUE_PARALLEL = 32;

/**
 * The jobs a sweep in this process queued, by queue: job id → until when (real time) a sweep need not
 * queue it again. The queue would ignore the same id anyway; this spares it (and Redis) the asking.
 */
const sweptJobs = new WeakMap<JobQueue, Map<string, number>>();

/**
 * Queues every target that is due (by the context's clock) within the horizon and held by no live
 * process: scheduled posts whose time came (while every process was down included), rate-limit waits
 * that ended, tries whose process died (lease run out). Each try is queued once, under the id of the
 * time it is due (publishSlot, decision 1496). Answers how many open targets it found due (queued now or before).
 */
export async function sweepSocialTargets(ctx: PostContext): Promise<number> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .select({ id: socialTargets.id, tries: socialTargets.tries, at: socialTargets.nextTryAt })
    .from(socialTargets)
    .innerJoin(socialPosts, eq(socialPosts.id, socialTargets.postId))
    .where(
      and(
        inArray(socialTargets.status, ["scheduled", "publishing"]),
        ne(socialPosts.status, "cancelled"),
        lte(socialTargets.nextTryAt, new Date(now.getTime() + SWEEP_HORIZON_MS)),
        or(isNull(socialTargets.leaseUntil), lte(socialTargets.leaseUntil, now)),
      ),
    )
    .orderBy(asc(socialTargets.nextTryAt))
    .limit(SWEEP_BATCH);
  const queue = ctx.queue;
  let swept = queue ? sweptJobs.get(queue) : undefined;
  if (queue && !swept) {
    swept = new Map();
    sweptJobs.set(queue, swept);
  }
  const real = Date.now();
  if (swept) for (const [id, until] of swept) if (until <= real) swept.delete(id);
  const todo: { jobId: string; id: string; tries: number; slot: string; delayMs: number }[] = [];
  for (const r of rows) {
    const dueIn = r.at!.getTime() - now.getTime();
    const slot = publishSlot(r.at!, now);
    const jobId = `${r.id}.${r.tries}.${slot}`;
    if (swept?.has(jobId)) continue;
    todo.push({ jobId, id: r.id, tries: r.tries, slot, delayMs: Math.max(0, dueIn) });
  }
  for (let i = 0; i < todo.length; i += SWEEP_ENQUEUE_PARALLEL)
    await Promise.all(
      todo.slice(i, i + SWEEP_ENQUEUE_PARALLEL).map(async (t) => {
        if (await queuePublish(ctx, t.id, t.tries, t.slot, t.delayMs))
          swept?.set(t.jobId, real + t.delayMs + RESCUE_MS);
      }),
    );
  return rows.length;
}

/** A running social publisher. */
export type SocialPublisher = {
  stop(opts?: { graceMs?: number }): Promise<void>;
};

// One publisher per queue in a process: the API and the render daemon of ./scripts/start share one
// in-process queue and must not both consume it.
const running = new WeakMap<object, { publisher: SocialPublisher; users: number }>();

/**
 * Publishes social targets from the job queue in this process (decision 1470): `social-publish` jobs
 * (PUBLISH_CONCURRENCY at a time) and the sweep (`social-publish-sweep`, every 5 s, one pass at start
 * that takes up what a previous process left). Every API process and the render daemon run it.
 */
export function startSocialPublisher(
  ctx: PostContext & { queue: JobQueue },
  adapters: PlatformAdapters,
  opts: { sweepEveryMs?: number } = {},
): SocialPublisher {
  const shared = running.get(ctx.queue);
  if (shared) {
    shared.users++;
    return shared.publisher;
  }
  const log = ctx.log.child({ app: "social-publisher" });
  const consumers: Consumer[] = [
    ctx.queue.consume(
      "social-publish",
      async (job) => {
        let r = await publishTarget(ctx, adapters, job.data.targetId);
        if (r.outcome === "skipped" && r.why === "not_due" && r.dueInMs <= EARLY_WAIT_MS) {
          const ms = r.dueInMs;
          await new Promise((done) => setTimeout(done, ms));
          r = await publishTarget(ctx, adapters, job.data.targetId);
        }
        if (r.outcome !== "skipped") log.info("social target", { targetId: job.data.targetId, ...r });
      },
      { concurrency: PUBLISH_CONCURRENCY },
    ),
    ctx.queue.consume("social-publish-sweep", async () => {
      const n = await sweepSocialTargets(ctx);
      if (n > 0) log.info("social publish sweep", { queued: n });
    }),
  ];
  const started = (async () => {
    await ctx.queue.schedule("social-publish-sweep", opts.sweepEveryMs ? { everyMs: opts.sweepEveryMs } : {});
    await ctx.queue.enqueue("social-publish-sweep", {}, { jobId: `startup-${process.pid}-${Date.now()}` });
  })().catch((err) =>
    log.warn("the social publish sweep did not start; jobs are still taken", { cause: String(err) }),
  );
  let stopping: Promise<void> | null = null;
  const publisher: SocialPublisher = {
    stop(stopOpts = {}) {
      const entry = running.get(ctx.queue);
      if (entry && --entry.users > 0) return Promise.resolve();
      stopping ??= (async () => {
        running.delete(ctx.queue);
        // The sweep's schedule waits on Redis; with Redis gone it never settles, and a stop must not
        // wait for it past its grace (an API stopping while Redis is down).
        const grace = stopOpts.graceMs ?? 10_000;
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([started, new Promise<void>((done) => (timer = setTimeout(done, grace)))]);
        clearTimeout(timer);
        for (const c of consumers) await c.close({ graceMs: stopOpts.graceMs ?? 10_000 });
      })();
      return stopping;
    },
  };
  running.set(ctx.queue, { publisher, users: 1 });
  return publisher;
}
