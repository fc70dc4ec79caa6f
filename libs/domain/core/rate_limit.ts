import { AppError } from "./errors.ts";

/** One request counted against a key's allowance. */
export type RateDecision = {
  allowed: boolean;
  /** Requests per window. */
  limit: number;
  /** Requests left in the window after this one (0 when refused). */
  remaining: number;
  /** Milliseconds until the allowance is back (for Retry-After and RateLimit-Reset). */
  resetMs: number;
  windowMs: number;
};

/** Counts requests per API key: in process, or shared by every API process through Redis. */
export type RateLimiter = {
  readonly shared: boolean;
  /** Counts `cost` requests (default 1: a JSON-RPC batch counts each call) when all of them fit, else none. */
  take(id: string, cost?: number): Promise<RateDecision>;
  close(): Promise<void>;
};

/**
 * The sliding-window estimate both limiters use: the previous fixed window's count weighted by how
 * much of it still overlaps the last `windowMs`, plus the current window's count.
 */
export function slidingEstimate(prev: number, curr: number, windowMs: number, now: number): number {
  const into = now % windowMs;
  return prev * (1 - into / windowMs) + curr;
}

/** How long until the estimate drops below the limit again (at most one window). */
export function resetAfter(prev: number, curr: number, limit: number, windowMs: number, now: number): number {
  const into = now % windowMs;
  const toNext = windowMs - into;
  if (curr >= limit) return toNext; // the current window alone is full: wait for it to become "previous"
  if (prev <= 0) return toNext;
  // prev * (1 - t/window) + curr < limit  ⇔  t > window * (1 - (limit - curr) / prev)
  const t = windowMs * (1 - (limit - curr) / prev);
  return Math.max(1, Math.min(toNext, Math.ceil(t - into)));
}

/** The in-process limiter (one API process, or the embedded default). */
export function createMemoryRateLimiter(opts: {
  requests: number;
  windowMs: number;
  now?: () => number;
}): RateLimiter {
  const now = opts.now ?? Date.now;
  const counts = new Map<string, { window: number; prev: number; curr: number }>();
  let sweeps = 0;
  return {
    shared: false,
    async take(id, cost = 1) {
      const t = now();
      const window = Math.floor(t / opts.windowMs);
      let c = counts.get(id);
      if (!c) {
        c = { window, prev: 0, curr: 0 };
        counts.set(id, c);
      } else if (c.window !== window) {
        c.prev = c.window === window - 1 ? c.curr : 0;
        c.curr = 0;
        c.window = window;
      }
      if (++sweeps % 10_000 === 0) for (const [k, v] of counts) if (v.window < window - 1) counts.delete(k);
      const estimate = slidingEstimate(c.prev, c.curr, opts.windowMs, t);
      if (estimate + cost - 1 >= opts.requests) {
        return {
          allowed: false,
          limit: opts.requests,
          remaining: 0,
          resetMs: resetAfter(c.prev, c.curr, opts.requests, opts.windowMs, t),
          windowMs: opts.windowMs,
        };
      }
      c.curr += cost;
      return {
        allowed: true,
        limit: opts.requests,
        remaining: Math.max(0, Math.floor(opts.requests - estimate - cost)),
        resetMs: opts.windowMs - (t % opts.windowMs),
        windowMs: opts.windowMs,
      };
    },
    async close() {
      counts.clear();
    },
  };
}

/** The RateLimit-* headers of a decision (IETF draft: Limit, Remaining, Reset in seconds, Policy). */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "ratelimit-limit": String(d.limit),
    "ratelimit-remaining": String(d.remaining),
    "ratelimit-reset": String(Math.max(1, Math.ceil(d.resetMs / 1000))),
    "ratelimit-policy": `${d.limit};w=${Math.round(d.windowMs / 1000)}`,
  };
}

/** 429 RATE_LIMITED with Retry-After and the RateLimit-* headers. */
export function rateLimitError(d: RateDecision): AppError {
  const seconds = Math.max(1, Math.ceil(d.resetMs / 1000));
  return new AppError(
    "RATE_LIMITED",
    `this API key made more than ${d.limit} requests in ${Math.round(d.windowMs / 1000)} s; retry in ${seconds} s`,
    { limit: d.limit, windowSeconds: Math.round(d.windowMs / 1000), retryAfterSeconds: seconds },
    { "retry-after": String(seconds), ...rateLimitHeaders(d) },
  );
}
