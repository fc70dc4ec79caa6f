import { Queue, Worker } from "bullmq";
import IORedis from "ioredis";
import type { Context } from "@site/domain";
import type { Runtime } from "@site/runtime";
import { runCollectorPass } from "./collector.ts";

/** The collector's period: every hour. */
export const COLLECT_EVERY_MS = 3_600_000;

/** Options of the schedule (tests give their own queue name and period). */
export type MetricsOptions = { queueName?: string; everyMs?: number };

/**
 * Starts the collector's schedule: with REDIS_URL a BullMQ job scheduler (one job per period, taken by
 * whichever metrics process is free; passes that overlap split the targets through SKIP LOCKED), else
 * an in-process timer. Either way a pass runs at start, to catch up on stages missed while down.
 */
export async function startMetrics(
  rt: Runtime | Context,
  opts: MetricsOptions = {},
): Promise<{ stop(): Promise<void> }> {
  const everyMs = opts.everyMs ?? COLLECT_EVERY_MS;
  if (rt.config.redisUrl)
    return startQueued(rt, rt.config.redisUrl, everyMs, opts.queueName ?? "social-metrics");
  return startTimer(rt, everyMs);
}

function startTimer(ctx: Context, everyMs: number) {
  let running: Promise<unknown> | null = null;
  const pass = () => {
    if (running) return; // a pass still running covers this tick: SKIP LOCKED would only idle
    running = runCollectorPass(ctx)
      .catch((err) => ctx.log.error("social metrics pass failed", { cause: String(err) }))
      .finally(() => {
        running = null;
      });
  };
  pass();
  const timer = setInterval(pass, everyMs);
  ctx.log.info("metrics collector scheduled in process", { everyMs });
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

async function startQueued(ctx: Context, redisUrl: string, everyMs: number, queueName: string) {
  // Workers block on Redis: they need maxRetriesPerRequest null; the producer side fails fast.
  const workerConn = new IORedis(redisUrl, { maxRetriesPerRequest: null });
  const queueConn = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new Queue(queueName, { connection: queueConn });
  queue.on("error", (err) => ctx.log.error("metrics queue error", { cause: String(err) }));
  await queue.upsertJobScheduler(
    "social-metrics-hourly",
    { every: everyMs },
    { name: "collect", opts: { removeOnComplete: 100, removeOnFail: 100 } },
  );
  const worker = new Worker(
    queueName,
    async (job) => {
      const report = await runCollectorPass(ctx);
      ctx.log.info("social metrics job done", { jobId: job.id, ...report });
      return report;
    },
    { connection: workerConn, concurrency: 1 },
  );
  worker.on("error", (err) => ctx.log.error("metrics worker error", { cause: String(err) }));
  worker.on("failed", (job, err) =>
    ctx.log.warn("social metrics job failed", { jobId: job?.id, cause: String(err) }),
  );
  // Catch up at start: one job per process start, deduplicated by id within the minute.
  await queue.add(
    "collect",
    {},
    { jobId: `startup-${Math.floor(Date.now() / 60_000)}`, removeOnComplete: 100, removeOnFail: 100 },
  );
  ctx.log.info("metrics collector scheduled on BullMQ", { queueName, everyMs });
  return {
    stop: async () => {
      await worker.close();
      await queue.close();
      workerConn.disconnect();
      queueConn.disconnect();
    },
  };
}
