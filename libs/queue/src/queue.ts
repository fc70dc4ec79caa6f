import type { JobName, JobPayload } from "./jobs.ts";

/** One try of a job as a consumer sees it. */
export type Job<N extends JobName = JobName> = {
  id: string;
  name: N;
  data: JobPayload<N>;
  /** This try's number, from 1. */
  attempt: number;
  /** Tries in all (from the catalog). */
  attempts: number;
  /** Aborted when the try times out or the consumer is closed without grace. */
  signal: AbortSignal;
};

/** Where a job stands; `missing` when the queue no longer knows it (trimmed or lost). */
export type JobState = "waiting" | "active" | "delayed" | "completed" | "failed" | "missing";

/** A running consumer. */
export type Consumer = {
  /** Stops taking jobs, waits up to graceMs for running ones, then hands them back to the queue. */
  close(opts?: { graceMs?: number }): Promise<void>;
};

/** The render queue: BullMQ on Redis, or in-process; nothing outside libs/queue knows which. */
export type RenderQueue = {
  readonly driver: "bullmq" | "memory";
  /** Adds a job; a job id already queued is kept as it is (idempotent). */
  enqueue<N extends JobName>(name: N, data: JobPayload<N>, opts: { jobId: string }): Promise<void>;
  /** Runs `handler` for jobs of `name`, `concurrency` at a time. */
  consume<N extends JobName>(
    name: N,
    handler: (job: Job<N>) => Promise<void>,
    opts?: { concurrency?: number },
  ): Consumer;
  /** Jobs waiting to run (waiting + delayed). */
  depth(): Promise<number>;
  /** Where a job stands. */
  state(jobId: string): Promise<JobState>;
  /** Forgets a finished job so its id can be enqueued again. */
  remove(jobId: string): Promise<void>;
  /** Closes consumers and connections. */
  close(): Promise<void>;
};

/** A failure that retrying cannot fix (bad input): the job fails at once, without further tries. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentJobError";
  }
}

/** A try that ran past its timeout (transient: it is retried). */
export class JobTimeoutError extends Error {
  constructor(ms: number) {
    super(`job timed out after ${ms} ms`);
    this.name = "JobTimeoutError";
  }
}

/** Runs `work` with an abort signal that fires after `ms` or when `outer` aborts; rejects on timeout. */
export async function withTimeout<T>(
  ms: number,
  outer: AbortSignal | null,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ctl = new AbortController();
  const onOuter = () => ctl.abort(outer?.reason);
  outer?.addEventListener("abort", onOuter, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new JobTimeoutError(ms);
      ctl.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([work(ctl.signal), timeout]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuter);
  }
}
