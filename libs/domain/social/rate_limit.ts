// Waits that the platforms state, read into one typed refusal (PlatformError `rate_limited`), and the
// short wait today's in-request publishing may take before answering (decision 1490).
import { PlatformError } from "./platform.ts";

/**
 * PRAW's reading of Reddit's RATELIMIT text ("you are doing that too much. try again in 9 minutes.",
 * "Take a break for 3 seconds before trying again."): the first `<1–3 digits> millisecond(s)|second(s)|
 * minute(s)` (`Reddit._ratelimit_regex`, https://github.com/praw-dev/praw/blob/main/praw/reddit.py),
 * milliseconds counted as 0, and the wait is that plus one second
 * (https://praw.readthedocs.io/en/stable/getting_started/ratelimits.html). Null when the text names no
 * wait.
 */
export function redditRatelimitMs(message: string): number | null {
  const m = /([0-9]{1,3}) (milliseconds?|seconds?|minutes?)/.exec(message);
  if (!m) return null;
  let seconds = Number(m[1]);
  if (m[2]!.startsWith("minute")) seconds *= 60;
  else if (m[2]!.startsWith("millisecond")) seconds = 0;
  return (seconds + 1) * 1000;
}

/**
 * When a rate-limited refusal may be tried again, on the caller's clock: `refusedAt` plus the wait the
 * platform stated (a moment it named, such as X's reset, is already a wait measured against the wall
 * clock it was stated on, so a skew between its clock and ours, or a test's clock, does not move it);
 * the moment itself where it gave no wait; null when it stated neither.
 */
export function retryTime(err: PlatformError, refusedAt: Date): Date | null {
  if (err.retryAfterMs !== null) return new Date(refusedAt.getTime() + err.retryAfterMs);
  return err.retryAt;
}

/** The longest stated wait today's in-request publishing sleeps through before one more try. */
export const IN_REQUEST_RETRY_MAX_MS = 5_000;

/**
 * Runs `publish`; a `rate_limited` refusal whose stated wait is at most `maxWaitMs` is slept through
 * (`sleep`) and the publish tried once more. A rate-limit refusal means the platform made nothing, so
 * the new try cannot post twice. A longer wait (or none stated) is rethrown as it came, for the caller to
 * record or to queue again at `retryTime`.
 */
export async function publishWithShortWait<T>(
  publish: () => Promise<T>,
  opts: { maxWaitMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  const max = opts.maxWaitMs ?? IN_REQUEST_RETRY_MAX_MS;
  try {
    return await publish();
  } catch (err) {
    if (!(err instanceof PlatformError) || err.kind !== "rate_limited") throw err;
    // Slept in real time, against the platform's own clock where it named a moment.
    const at = retryTime(err, new Date());
    if (!at) throw err;
    const wait = Math.max(0, at.getTime() - Date.now());
    if (wait > max) throw err;
    await (opts.sleep ?? Bun.sleep)(wait);
    return publish();
  }
}
