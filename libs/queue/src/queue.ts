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
  /**
   * Aborted when the try times out (reason: JobTimeoutError) or when the consumer closes and its grace
   * has run out (reason: HandBackError; the try is then not counted).
   */
  signal: AbortSignal;
};

/** Where a job stands; `missing` when the queue no longer knows it (trimmed or lost). */
export type JobState = "waiting" | "active" | "delayed" | "completed" | "failed" | "missing";

/** A running consumer. */
export type Consumer = {
  /**
   * Stops taking jobs and gives every running one up to graceMs to finish; then hands back the rest
   * (their signal aborts with HandBackError): each waits again without the try counting as an attempt.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
};

/** What an operator sees of one job kind's queue: counts by state and the consumers connected now. */
export type QueueStats = {
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
  completed: number;
  /** Consumers taking jobs now (BullMQ: worker connections seen by Redis, named host:pid). */
  consumers: { name: string; addr?: string; ageSeconds?: number; idleSeconds?: number }[];
};

/**
 * The job queue (screenshot renders and clips, the metrics schedule, mail and webhook deliveries):
 * BullMQ on Redis, or in-process; nothing outside libs/queue knows which. Each job kind waits in its
 * catalog queue, so job ids are per kind.
 */
export type JobQueue = {
  readonly driver: "bullmq" | "memory";
  /**
   * Adds a job; a job id already queued is kept as it is (idempotent). With `delayMs` it waits that long
   * (real time) before it can run.
   */
  enqueue<N extends JobName>(
    name: N,
    data: JobPayload<N>,
    opts: { jobId: string; delayMs?: number },
  ): Promise<void>;
  /** Runs `handler` for jobs of `name`, `concurrency` at a time. */
  consume<N extends JobName>(
    name: N,
    handler: (job: Job<N>) => Promise<void>,
    opts?: { concurrency?: number },
  ): Consumer;
  /**
   * Starts a repeatable job's schedule: one job per period (the catalog's `repeatEveryMs`, or `everyMs`)
   * for every process sharing the queue together (BullMQ job scheduler), or a timer in this process.
   * When the first period starts is the driver's business: enqueue a job yourself to run one at start.
   */
  schedule(name: JobName, opts?: { everyMs?: number }): Promise<void>;
  /** Jobs of `name` waiting to run (waiting + delayed). */
  depth(name: JobName): Promise<number>;
  /** Counts by state of `name`'s queue and the consumers taking its jobs, for operators (queue:status). */
  stats(name: JobName): Promise<QueueStats>;
  /** Where a job of `name` stands. */
  state(name: JobName, jobId: string): Promise<JobState>;
  /** Forgets a finished job of `name` so its id can be enqueued again. */
  remove(name: JobName, jobId: string): Promise<void>;
  /** Stops schedules, closes consumers and connections. */
  close(): Promise<void>;
};

/**
 * The one way to say "retrying cannot fix this" (bad input, a blocked address, a page past its
 * deadline, an unknown style, a missing project): the job fails at once, without further tries.
 * Everything else thrown by a handler is transient and retried per the catalog.
 */
export class PermanentJobError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = "PermanentJobError";
  }
}

/** The queue's backend (Redis) is down or did not answer in time: the caller answers 503, not 500. */
export class QueueUnavailableError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = "QueueUnavailableError";
  }
}

/**
 * The abort reason of a try that a closing consumer hands back: the job waits again, at the head of the
 * line, and the try is not counted as an attempt.
 */
export class HandBackError extends Error {
  constructor() {
    super("handed back: the consumer is closing");
    this.name = "HandBackError";
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
