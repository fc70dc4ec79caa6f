/**
 * The one job catalog: every job's name, payload shape (ids only, never secrets), attempts, backoff and
 * timeout. The producer (API) and the consumer (render daemon) both import it.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The payload of a screenshot render job: the render's id and nothing else. */
export type RenderScreenshotPayload = { renderId: string };

/** How one kind of job is run. */
export type JobSpec<P> = {
  /** Tries in all, the first included. */
  attempts: number;
  /** Exponential backoff between tries: delay * 2^(try-1) ms. */
  backoffMs: number;
  /** A try that runs longer is aborted and counts as a transient failure. */
  timeoutMs: number;
  /** Checks a payload; throws on anything but the declared ids. */
  parse(data: unknown): P;
};

function parseRenderPayload(data: unknown): RenderScreenshotPayload {
  const d = data as Record<string, unknown> | null;
  if (!d || typeof d !== "object" || Array.isArray(d)) throw new TypeError("payload must be an object");
  const keys = Object.keys(d);
  if (keys.length !== 1 || keys[0] !== "renderId") throw new TypeError("payload carries only renderId");
  if (typeof d.renderId !== "string" || !UUID.test(d.renderId))
    throw new TypeError("renderId must be a UUID");
  return { renderId: d.renderId };
}

/** Every job the system runs. */
export const JOBS = {
  "render-screenshot": {
    attempts: 3,
    backoffMs: 2000,
    timeoutMs: 120_000,
    parse: parseRenderPayload,
  } satisfies JobSpec<RenderScreenshotPayload>,
} as const;

/** A job's name. */
export type JobName = keyof typeof JOBS;

/** The payload type of a job. */
export type JobPayload<N extends JobName> = ReturnType<(typeof JOBS)[N]["parse"]>;

/** The delay before try `attempt + 1` after try `attempt` failed. */
export function backoffDelay(name: JobName, attempt: number): number {
  return JOBS[name].backoffMs * 2 ** Math.max(0, attempt - 1);
}
