import type { Logger } from "@site/config";
import { backoffDelay, JOBS, type JobName } from "./jobs.ts";
import {
  type Consumer,
  type Job,
  type JobState,
  PermanentJobError,
  type RenderQueue,
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

/** The in-process driver: jobs live in this process's memory (the embedded default, one machine). */
export function createMemoryQueue(opts: { log: Logger }): RenderQueue {
  const jobs = new Map<string, Entry>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const runners = new Set<Runner>();

  const trim = () => {
    const finished = [...jobs.values()].filter((j) => j.state === "completed" || j.state === "failed");
    if (finished.length <= KEEP_FINISHED) return;
    finished.sort((a, b) => a.finishedAt - b.finishedAt);
    for (const j of finished.slice(0, finished.length - KEEP_FINISHED)) jobs.delete(j.id);
  };

  const pump = () => {
    for (const runner of runners) {
      if (runner.closed) continue;
      for (const entry of jobs.values()) {
        if (runner.running.size >= runner.concurrency) break;
        if (entry.state !== "waiting" || entry.name !== runner.name) continue;
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
          entry.state = "completed";
          entry.finishedAt = Date.now();
        },
        (err: unknown) => {
          if (!mine()) return;
          const permanent = err instanceof PermanentJobError;
          if (permanent || entry.attempt >= spec.attempts) {
            entry.state = "failed";
            entry.finishedAt = Date.now();
            opts.log.warn("job failed", { jobId: entry.id, attempt: entry.attempt, cause: String(err) });
            return;
          }
          entry.state = "delayed";
          const timer = setTimeout(
            () => {
              timers.delete(timer);
              if (entry.state !== "delayed") return;
              entry.state = "waiting";
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

  const queue: RenderQueue = {
    driver: "memory",
    async enqueue(name, data, { jobId }) {
      JOBS[name].parse(data);
      if (jobs.has(jobId)) return;
      jobs.set(jobId, { id: jobId, name, data, state: "waiting", attempt: 0, finishedAt: 0, run: 0 });
      queueMicrotask(pump);
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
            const entry = jobs.get(id);
            if (entry && entry.state === "active") {
              entry.state = "waiting";
              entry.attempt -= 1;
              entry.run += 1;
            }
            ctl.abort(new Error("consumer closed"));
          }
          runners.delete(runner);
          queueMicrotask(pump);
        },
      };
      return consumer;
    },
    async depth() {
      let n = 0;
      for (const j of jobs.values()) if (j.state === "waiting" || j.state === "delayed") n++;
      return n;
    },
    async state(jobId) {
      return jobs.get(jobId)?.state ?? "missing";
    },
    async remove(jobId) {
      const entry = jobs.get(jobId);
      if (entry && entry.state !== "active") jobs.delete(jobId);
    },
    async close() {
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
