import { hostname } from "node:os";
import type { Logger } from "@site/config";
import { Queue, UnrecoverableError, WaitingError, Worker } from "bullmq";
import IORedis from "ioredis";
import { JOBS, type JobName, jobSpec } from "./jobs.ts";
import {
  type Consumer,
  HandBackError,
  type Job,
  type JobQueue,
  type JobState,
  PermanentJobError,
  QueueUnavailableError,
  withTimeout,
} from "./queue.ts";

/** Options of the BullMQ driver. */
export type BullQueueOptions = {
  redisUrl: string;
  log: Logger;
  /** Key prefix (one per deployment, or per test file). */
  prefix?: string;
  /** How long a worker's lock on a job lasts without renewal; a dead worker's job is recovered after it. */
  lockDurationMs?: number;
  /** The bound on one producer call (enqueue, state, depth); past it the call fails as unavailable. */
  commandTimeoutMs?: number;
};

/** The longest a recurring job lost with Redis's data waits to be created again (with no reconnection). */
const SCHEDULE_CHECK_MS = 30_000;

/** After the grace, how long handed-back tries get to notice their aborted signal before the lock is dropped. */
const HAND_BACK_MS = 5000;

/** The BullMQ driver on Redis: any number of daemons, stalled-job recovery, retries with backoff. */
export function createBullQueue(opts: BullQueueOptions): JobQueue {
  const prefix = opts.prefix ?? "bull";
  const lockDuration = opts.lockDurationMs ?? 30_000;
  const commandTimeout = opts.commandTimeoutMs ?? 5000;
  /** A producer call bounded in time; Redis down or slow becomes QueueUnavailableError. */
  const bounded = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await withTimeout(commandTimeout, null, work);
    } catch (err) {
      throw new QueueUnavailableError(`the render queue (Redis) did not answer: ${what}`, { cause: err });
    }
  };
  // Producers fail fast: an API request must not hang on a Redis that is down.
  const producer = new IORedis(opts.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    lazyConnect: true,
  });
  producer.on("error", (err) => opts.log.warn("redis producer error", { cause: err }));
  // One BullMQ queue per catalog queue, opened on first use, all on the producer connection.
  const queues = new Map<string, Queue>();
  const queueOf = (name: JobName): Queue => {
    const queueName = JOBS[name].queue;
    let queue = queues.get(queueName);
    if (!queue) {
      queue = new Queue(queueName, { connection: producer, prefix });
      queue.on("error", (err) => opts.log.warn("job queue error", { queue: queueName, cause: err }));
      queues.set(queueName, queue);
    }
    return queue;
  };
  const jobOptions = (name: JobName) => {
    const spec = JOBS[name];
    return {
      attempts: spec.attempts,
      backoff: { type: "exponential", delay: spec.backoffMs },
      removeOnComplete: { count: 1000, age: 24 * 3600 },
      removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
    };
  };
  const workers = new Set<{ worker: Worker; conn: IORedis }>();

  // Recurring jobs exist only in Redis: one that lost its data (restarted empty, flushed) has none, and
  // nothing would run them again until a process restarts (issue 38, decision 1441). Every schedule this
  // process started is asserted again on each (re)connection and checked every period (30 s at most).
  const schedules = new Map<JobName, number>();
  const upsertSchedule = (name: JobName, everyMs: number) =>
    queueOf(name).upsertJobScheduler(name, { every: everyMs }, { name, data: {}, opts: jobOptions(name) });
  let reasserting: Promise<void> | null = null;
  const reassertSchedules = () => {
    reasserting ??= (async () => {
      for (const [name, everyMs] of schedules) {
        try {
          if (await bounded("schedule", () => queueOf(name).getJobScheduler(name))) continue;
          await bounded("schedule", () => upsertSchedule(name, everyMs));
          opts.log.warn("re-created a recurring job that Redis had lost", { job: name, everyMs });
        } catch (err) {
          // Redis still away: the next connection or check asserts it
          opts.log.debug("could not check a recurring job yet", { job: name, cause: String(err) });
        }
      }
    })().finally(() => {
      reasserting = null;
    });
    return reasserting;
  };
  producer.on("ready", () => {
    if (schedules.size > 0) void reassertSchedules();
  });
  let scheduleCheck: ReturnType<typeof setInterval> | null = null;

  const jobQueue: JobQueue = {
    driver: "bullmq",
    async enqueue(name, data, { jobId, delayMs }) {
      JOBS[name].parse(data);
      const delay = delayMs && delayMs > 0 ? { delay: Math.ceil(delayMs) } : {};
      await bounded("enqueue", () => queueOf(name).add(name, data, { jobId, ...jobOptions(name), ...delay }));
    },
    consume(name, handler, o = {}) {
      const spec = JOBS[name as JobName];
      // Workers block on Redis and must retry forever (BullMQ's requirement).
      const conn = new IORedis(opts.redisUrl, { maxRetriesPerRequest: null });
      conn.on("error", (err) => opts.log.warn("redis worker connection error", { cause: err }));
      const running = new Map<string, AbortController>();
      const worker = new Worker(
        spec.queue,
        async (bj, token) => {
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
            if (ctl.signal.reason instanceof HandBackError && token) {
              // Back to the head of the line; a WaitingError tells BullMQ no attempt was made.
              await bj.moveToWait(token);
              throw new WaitingError();
            }
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
          // Shown by `bun run admin queue:status` and the queue dashboard: which daemon is this.
          name: `${hostname()}:${process.pid}`,
          lockDuration,
          stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
          maxStalledCount: 2,
        },
      );
      worker.on("error", (err) => opts.log.error("job worker error", { job: name, cause: err }));
      worker.on("failed", (bj, err) =>
        opts.log.warn("job try failed", { jobId: bj?.id, attempt: bj?.attemptsMade, cause: err }),
      );
      const entry = { worker, conn };
      workers.add(entry);
      const consumer: Consumer = {
        async close({ graceMs = 30_000 } = {}) {
          if (!workers.has(entry)) return;
          workers.delete(entry);
          if (conn.status !== "ready" && running.size === 0) {
            // Redis unreachable and no try running: nothing to finish or hand back, and a graceful
            // close (or QUIT) would wait for a connection that may never come (a stop while Redis is down).
            void worker.close(true).catch(() => {});
            conn.disconnect();
            return;
          }
          const graceful = worker.close();
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<"late">((r) => {
            timer = setTimeout(() => r("late"), graceMs);
          });
          if ((await Promise.race([graceful, late])) === "late") {
            // Hand back: each try moves its job back to wait, uncounted, and the close completes.
            for (const ctl of running.values()) ctl.abort(new HandBackError());
            clearTimeout(timer);
            const stuck = new Promise<"late">((r) => {
              timer = setTimeout(() => r("late"), HAND_BACK_MS);
            });
            if ((await Promise.race([graceful, stuck])) === "late") {
              // A try that ignores its signal keeps its lock until the connection drops; the stalled
              // check then gives the job to another daemon (not counted as an attempt either).
              opts.log.warn("a handed-back job did not stop; dropping its lock", {
                jobs: [...running.keys()],
              });
              conn.disconnect();
              clearTimeout(timer);
              return;
            }
          }
          clearTimeout(timer);
          await conn.quit().catch(() => conn.disconnect());
        },
      };
      return consumer;
    },
    async schedule(name, o = {}) {
      const everyMs = o.everyMs ?? jobSpec(name).repeatEveryMs;
      if (!everyMs) throw new TypeError(`${name} is not a repeatable job`);
      // Upserted under the job's name: every process that starts the schedule shares the one scheduler.
      await upsertSchedule(name, everyMs);
      schedules.set(name, everyMs);
      if (scheduleCheck) clearInterval(scheduleCheck);
      scheduleCheck = setInterval(
        () => void reassertSchedules(),
        Math.min(SCHEDULE_CHECK_MS, ...schedules.values()),
      );
      scheduleCheck.unref?.();
    },
    async stats(name) {
      const queue = queueOf(name);
      const [c, workers] = await Promise.all([
        bounded("stats", () =>
          queue.getJobCounts("wait", "prioritized", "delayed", "active", "failed", "completed"),
        ),
        bounded("stats", () => queue.getWorkers()),
      ]);
      const seconds = (v: unknown) => (v === undefined ? undefined : Number(v));
      return {
        waiting: (c.wait ?? 0) + (c.prioritized ?? 0),
        delayed: c.delayed ?? 0,
        active: c.active ?? 0,
        failed: c.failed ?? 0,
        completed: c.completed ?? 0,
        consumers: workers.map((w) => {
          const raw = String(w.rawname ?? w.name ?? "");
          const named = raw.indexOf(":w:");
          return {
            name: named >= 0 ? raw.slice(named + 3) : raw,
            addr: w.addr as string | undefined,
            ageSeconds: seconds(w.age),
            idleSeconds: seconds(w.idle),
          };
        }),
      };
    },
    async depth(name) {
      const c = await bounded("depth", () => queueOf(name).getJobCounts("wait", "delayed", "prioritized"));
      return (c.wait ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
    },
    async state(name, jobId): Promise<JobState> {
      // One script call per job: the sweeper asks this for every render in progress every few seconds.
      const s = await bounded("state", () => queueOf(name).getJobState(jobId));
      if (s === "waiting" || s === "prioritized" || s === "waiting-children") return "waiting";
      if (s === "active" || s === "delayed" || s === "completed" || s === "failed") return s;
      return "missing";
    },
    async remove(name, jobId) {
      const job = await queueOf(name).getJob(jobId);
      if (job && !(await job.isActive())) await job.remove();
    },
    async close() {
      if (scheduleCheck) clearInterval(scheduleCheck);
      schedules.clear();
      await reasserting;
      for (const { worker, conn } of [...workers]) {
        await worker.close(true);
        await conn.quit().catch(() => conn.disconnect());
      }
      workers.clear();
      for (const queue of queues.values()) await queue.close();
      queues.clear();
      await producer.quit().catch(() => producer.disconnect());
    },
  };
  return jobQueue;
}

/**
 * The BullMQ queues of the catalog's job kinds as BullMQ's own `Queue`s, for an operator dashboard
 * (bull-board) that reads and retries jobs itself; their own connection, closed with `close`.
 */
export function openQueuesForDashboard(opts: { redisUrl: string; prefix?: string }): {
  queues: Queue[];
  close(): Promise<void>;
} {
  const connection = new IORedis(opts.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    lazyConnect: true,
  });
  connection.on("error", () => {});
  const names = [...new Set(Object.values(JOBS).map((spec) => spec.queue))];
  const queues = names.map((name) => {
    const queue = new Queue(name, { connection, prefix: opts.prefix ?? "bull" });
    queue.on("error", () => {});
    return queue;
  });
  return {
    queues,
    close: async () => {
      for (const queue of queues) await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
