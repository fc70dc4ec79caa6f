import type { Context } from "@site/domain/core";
import type { JobQueue } from "@site/queue";
import { runCollectorPass } from "./collector.ts";

/** What the schedule runs on: the context and the job queue (BullMQ on REDIS_URL, else in-process). */
export type MetricsDeps = Context & { queue: JobQueue };

/** Options of the schedule (tests give a shorter period; the catalog's is one hour). */
export type MetricsOptions = { everyMs?: number };

/**
 * Starts the collector: consumes `collect-social-metrics` jobs one at a time and starts the job's
 * schedule (libs/queue: with REDIS_URL one BullMQ job scheduler shared by every metrics process, passes
 * that overlap splitting the targets through SKIP LOCKED; else a timer in this process). A pass also
 * runs at start, to catch up on stages missed while down.
 */
export async function startMetrics(
  deps: MetricsDeps,
  opts: MetricsOptions = {},
): Promise<{ stop(): Promise<void> }> {
  const consumer = deps.queue.consume("collect-social-metrics", async (job) => {
    const report = await runCollectorPass(deps);
    deps.log.info("social metrics pass done", { jobId: job.id, ...report });
  });
  await deps.queue.schedule("collect-social-metrics", { everyMs: opts.everyMs });
  // One catch-up job per process start, deduplicated by id within the minute.
  await deps.queue.enqueue(
    "collect-social-metrics",
    {},
    { jobId: `startup-${Math.floor(Date.now() / 60_000)}` },
  );
  deps.log.info("metrics collector scheduled", { driver: deps.queue.driver });
  return { stop: () => consumer.close() };
}
