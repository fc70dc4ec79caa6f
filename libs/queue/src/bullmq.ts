import type { Logger } from "@site/config";
import { Queue, UnrecoverableError, Worker } from "bullmq";
import IORedis from "ioredis";
import { JOBS, type JobName } from "./jobs.ts";
import { type Consumer, type Job, PermanentJobError, type RenderQueue, withTimeout } from "./queue.ts";

/** Options of the BullMQ driver. */
export type BullQueueOptions = {
  redisUrl: string;
  log: Logger;
  /** Key prefix (one per deployment, or per test file). */
  prefix?: string;
  /** How long a worker's lock on a job lasts without renewal; a dead worker's job is recovered after it. */
  lockDurationMs?: number;
};

const QUEUE_NAME = "renders";
const ENQUEUE_TIMEOUT_MS = 5000;

/** The BullMQ driver on Redis: any number of daemons, stalled-job recovery, retries with backoff. */
export function createBullQueue(opts: BullQueueOptions): RenderQueue {
  const prefix = opts.prefix ?? "bull";
  const lockDuration = opts.lockDurationMs ?? 30_000;
  // Producers fail fast: an API request must not hang on a Redis that is down.
  const producer = new IORedis(opts.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    lazyConnect: true,
  });
  producer.on("error", (err) => opts.log.warn("redis producer error", { cause: String(err) }));
  const queue = new Queue(QUEUE_NAME, { connection: producer, prefix });
  queue.on("error", (err) => opts.log.warn("render queue error", { cause: String(err) }));
  const workers = new Set<{ worker: Worker; conn: IORedis }>();

  const renderQueue: RenderQueue = {
    driver: "bullmq",
    async enqueue(name, data, { jobId }) {
      const spec = JOBS[name];
      spec.parse(data);
      await withTimeout(ENQUEUE_TIMEOUT_MS, null, () =>
        queue.add(name, data, {
          jobId,
          attempts: spec.attempts,
          backoff: { type: "exponential", delay: spec.backoffMs },
          removeOnComplete: { count: 1000, age: 24 * 3600 },
          removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
        }),
      );
    },
    consume(name, handler, o = {}) {
      const spec = JOBS[name as JobName];
      // Workers block on Redis and must retry forever (BullMQ's requirement).
      const conn = new IORedis(opts.redisUrl, { maxRetriesPerRequest: null });
      conn.on("error", (err) => opts.log.warn("redis worker connection error", { cause: String(err) }));
      const running = new Map<string, AbortController>();
      const worker = new Worker(
        QUEUE_NAME,
        async (bj) => {
          if (bj.name !== name) throw new UnrecoverableError(`no consumer for job ${bj.name}`);
          const ctl = new AbortController();
          running.set(String(bj.id), ctl);
          try {
            let data: ReturnType<typeof spec.parse>;
            try {
              data = spec.parse(bj.data);
            } catch (err) {
              throw new UnrecoverableError(`bad payload: ${String(err)}`);
            }
            const job = {
              id: String(bj.id),
              name,
              data,
              attempt: bj.attemptsMade + 1,
              attempts: bj.opts.attempts ?? spec.attempts,
              signal: ctl.signal,
            } as Job<typeof name>;
            await withTimeout(spec.timeoutMs, ctl.signal, (signal) => handler({ ...job, signal }));
          } catch (err) {
            if (err instanceof PermanentJobError) throw new UnrecoverableError(err.message);
            throw err;
          } finally {
            running.delete(String(bj.id));
          }
        },
        {
          connection: conn,
          prefix,
          concurrency: Math.max(1, o.concurrency ?? 1),
          lockDuration,
          stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
          maxStalledCount: 2,
        },
      );
      worker.on("error", (err) => opts.log.error("render worker error", { cause: String(err) }));
      worker.on("failed", (bj, err) =>
        opts.log.warn("job try failed", { jobId: bj?.id, attempt: bj?.attemptsMade, cause: String(err) }),
      );
      const entry = { worker, conn };
      workers.add(entry);
      const consumer: Consumer = {
        async close({ graceMs = 30_000 } = {}) {
          if (!workers.has(entry)) return;
          workers.delete(entry);
          const graceful = worker.close();
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<"late">((r) => {
            timer = setTimeout(() => r("late"), graceMs);
          });
          if ((await Promise.race([graceful, late])) === "late") {
            // Hand back: the lock lapses and the stalled check gives the job to another daemon.
            for (const ctl of running.values()) ctl.abort(new Error("consumer closed"));
            await worker.close(true);
          }
          clearTimeout(timer);
          await conn.quit().catch(() => conn.disconnect());
        },
      };
      return consumer;
    },
    async depth() {
      const c = await queue.getJobCounts("wait", "delayed", "prioritized");
      return (c.wait ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
    },
    async state(jobId) {
      const job = await queue.getJob(jobId);
      if (!job) return "missing";
      const s = await job.getState();
      if (s === "waiting" || s === "prioritized" || s === "waiting-children") return "waiting";
      if (s === "active" || s === "delayed" || s === "completed" || s === "failed") return s;
      return "missing";
    },
    async remove(jobId) {
      const job = await queue.getJob(jobId);
      if (job && !(await job.isActive())) await job.remove();
    },
    async close() {
      for (const { worker, conn } of [...workers]) {
        await worker.close(true);
        await conn.quit().catch(() => conn.disconnect());
      }
      workers.clear();
      await queue.close();
      await producer.quit().catch(() => producer.disconnect());
    },
  };
  return renderQueue;
}
