// Waits that the platforms state, read into one typed refusal (PlatformError `rate_limited`), and when
// the target's job tries again (decisions 1490, 1472).
import type { PlatformError } from "./platform.ts";

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
