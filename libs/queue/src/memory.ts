import { hostname } from "node:os";
import type { Logger } from "@site/config";
import { backoffDelay, JOBS, type JobName, jobSpec } from "./jobs.ts";
import {
  type Consumer,
  HandBackError,
  type Job,
  type JobQueue,
  type JobState,
  PermanentJobError,
  withTimeout,
} from "./queue.ts";

type Entry = {
  id: string;
  name: JobName;
  data: unknown;
  state: Exclude<JobState, "missing">;
  attempt: number;
  finishedAt: number;
  /** Bumped on every start and hand-back, so a stale try cannot settle a newer one. */
  run: number;
};

type Runner = {
  name: JobName;
  concurrency: number;
  running: Map<string, AbortController>;
  closed: boolean;
  handler: (job: Job) => Promise<void>;
};

/** Finished jobs kept for `state`, as BullMQ's removeOnComplete/removeOnFail trimming does. */
const KEEP_FINISHED = 1000;

/** Job ids are per job kind, as in BullMQ where each kind has its own queue. */
const keyOf = (name: JobName, jobId: string) => `${name}\u0000${jobId}`;

/** A first-in first-out list whose shift is O(1) (Array.shift copies the rest). */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  get size() {
    return this.items.length - this.head;
  }
  push(x: T) {
    this.items.push(x);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const x = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }
}

/**
 * The in-process driver: jobs live in this process's memory (the embedded default, one machine). Each
 * kind's waiting jobs are a FIFO and finished jobs another, so taking, ending and trimming a job cost the
 * same with 10 or 100,000 jobs queued (issue 33: 10,000 delayed publications).
 */
export function createMemoryQueue(opts: { log: Logger }): JobQueue {
  const jobs = new Map<string, Entry>();
  const waiting = new Map<JobName, Fifo<Entry>>();
  const finished = new Fifo<Entry>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const schedules = new Set<ReturnType<typeof setInterval>>();
  const runners = new Set<Runner>();

  /** Makes the entry wait for a consumer (new, its delay over, retried or handed back). */
  const makeWaiting = (entry: Entry) => {
    entry.state = "waiting";
    let q = waiting.get(entry.name);
    if (!q) {
      q = new Fifo();
      waiting.set(entry.name, q);
    }
    q.push(entry);
  };

  const finish = (entry: Entry, state: "completed" | "failed") => {
    entry.state = state;
    entry.finishedAt = Date.now();
    finished.push(entry);
  };

  // The oldest finished jobs go first; one removed, or enqueued again since, is only dropped from the list.
  const trim = () => {
    while (finished.size > KEEP_FINISHED) {
      const j = finished.shift()!;
      const key = keyOf(j.name, j.id);
      if (jobs.get(key) === j && (j.state === "completed" || j.state === "failed")) jobs.delete(key);
    }
  };

  const pump = () => {
    for (const runner of runners) {
      if (runner.closed) continue;
      const q = waiting.get(runner.name);
      while (q && q.size > 0 && runner.running.size < runner.concurrency) {
        const entry = q.shift()!;
        // Removed, or taken by another path since it was listed: not this listing's to run.
        if (entry.state !== "waiting" || jobs.get(keyOf(entry.name, entry.id)) !== entry) continue;
        run(runner, entry);
      }
    }
  };

  const run = (runner: Runner, entry: Entry) => {
    entry.state = "active";
    entry.attempt += 1;
    entry.run += 1;
    const myRun = entry.run;
    const mine = () => entry.state === "active" && entry.run === myRun;
    const ctl = new AbortController();
    runner.running.set(entry.id, ctl);
    const spec = JOBS[entry.name];
    const job = {
      id: entry.id,
      name: entry.name,
      data: spec.parse(entry.data),
      attempt: entry.attempt,
      attempts: spec.attempts,
      signal: ctl.signal,
    } as Job;
    withTimeout(spec.timeoutMs, ctl.signal, (signal) => runner.handler({ ...job, signal }))
      .then(
        () => {
          if (!mine()) return;
          finish(entry, "completed");
        },
        (err: unknown) => {
          if (!mine()) return;
          const permanent = err instanceof PermanentJobError;
          if (permanent || entry.attempt >= spec.attempts) {
            finish(entry, "failed");
            opts.log.warn("job failed", { jobId: entry.id, attempt: entry.attempt, cause: err });
            return;
          }
          entry.state = "delayed";
          const timer = setTimeout(
            () => {
              timers.delete(timer);
              if (entry.state !== "delayed") return;
              makeWaiting(entry);
              pump();
            },
            backoffDelay(entry.name, entry.attempt),
          );
          timers.add(timer);
        },
      )
      .finally(() => {
        runner.running.delete(entry.id);
        trim();
        queueMicrotask(pump);
      });
  };

  const queue: JobQueue = {
    driver: "memory",
    async enqueue(name, data, { jobId, delayMs }) {
      JOBS[name].parse(data);
      const key = keyOf(name, jobId);
      if (jobs.has(key)) return;
      const delayed = (delayMs ?? 0) > 0;
      const entry: Entry = {
        id: jobId,
        name,
        data,
        state: "delayed",
        attempt: 0,
        finishedAt: 0,
        run: 0,
      };
      jobs.set(key, entry);
      if (!delayed) {
        makeWaiting(entry);
        return queueMicrotask(pump);
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (entry.state !== "delayed" || jobs.get(key) !== entry) return;
        makeWaiting(entry);
        pump();
      }, delayMs);
      timers.add(timer);
    },
    consume(name, handler, o = {}) {
      const runner: Runner = {
        name,
        concurrency: Math.max(1, o.concurrency ?? 1),
        running: new Map(),
        closed: false,
        handler: handler as (job: Job) => Promise<void>,
      };
      runners.add(runner);
      queueMicrotask(pump);
      const consumer: Consumer = {
        async close({ graceMs = 30_000 } = {}) {
          runner.closed = true;
          const deadline = Date.now() + graceMs;
          while (runner.running.size > 0 && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 20));
          // Hand back what is still running: the job waits again for another consumer.
          for (const [id, ctl] of runner.running) {
            const entry = jobs.get(keyOf(runner.name, id));
            if (entry && entry.state === "active") {
              makeWaiting(entry);
              entry.attempt -= 1;
              entry.run += 1;
            }
            ctl.abort(new HandBackError());
          }
          runners.delete(runner);
          queueMicrotask(pump);
        },
      };
      return consumer;
    },
    async schedule(name, o = {}) {
      const everyMs = o.everyMs ?? jobSpec(name).repeatEveryMs;
      if (!everyMs) throw new TypeError(`${name} is not a repeatable job`);
      // One job per period slot: its id names the slot, so a slow pass is never queued twice.
      const timer = setInterval(() => {
        const slot = Math.floor(Date.now() / everyMs);
        void queue.enqueue(name, {} as never, { jobId: `every-${everyMs}-${slot}` });
      }, everyMs);
      schedules.add(timer);
    },
    async stats(name) {
      const mine = [...jobs.values()].filter((j) => j.name === name);
      const count = (state: Entry["state"]) => mine.filter((j) => j.state === state).length;
      return {
        waiting: count("waiting"),
        delayed: count("delayed"),
        active: count("active"),
        failed: count("failed"),
        completed: count("completed"),
        consumers: [...runners]
          .filter((r) => !r.closed && r.name === name)
          .map(() => ({ name: `${hostname()}:${process.pid} (in process)` })),
      };
    },
    async depth(name) {
      let n = 0;
      for (const j of jobs.values())
        if (j.name === name && (j.state === "waiting" || j.state === "delayed")) n++;
      return n;
    },
    async state(name, jobId) {
      return jobs.get(keyOf(name, jobId))?.state ?? "missing";
    },
    async remove(name, jobId) {
      const entry = jobs.get(keyOf(name, jobId));
      if (entry && entry.state !== "active") jobs.delete(keyOf(name, jobId));
    },
    async close() {
      for (const t of schedules) clearInterval(t);
      schedules.clear();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const r of runners) {
        r.closed = true;
        for (const ctl of r.running.values()) ctl.abort(new Error("queue closed"));
      }
      runners.clear();
    },
  };
  return queue;
}
