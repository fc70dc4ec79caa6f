import { once } from "node:events";
import type { Config, Logger } from "@site/config";
import {
  createMemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
  resetAfter,
  slidingEstimate,
} from "@site/domain/core";
import IORedis from "ioredis";

// Reads the previous and current window, and counts this request (ARGV[4] of them: a batch) only when
// the estimate allows all of it: refused requests do not count, so a client that backs off gets its
// allowance back on time.
const TAKE = `
local prev = tonumber(redis.call('GET', KEYS[1]) or '0')
local curr = tonumber(redis.call('GET', KEYS[2]) or '0')
local cost = tonumber(ARGV[4])
local estimate = prev * tonumber(ARGV[1]) + curr
if estimate + cost - 1 >= tonumber(ARGV[2]) then return {0, prev, curr} end
curr = redis.call('INCRBY', KEYS[2], cost)
if curr == cost then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return {1, prev, curr}
`;

/**
 * The limiter shared by every API process through Redis (a sliding window over two fixed windows, in
 * one script). Redis down or slow: the request is let through (the limiter fails open, logged at most
 * once a minute) and Redis is not asked again for 5 s, so an outage of the limiter never becomes one of
 * the API.
 */
export function createRedisRateLimiter(opts: {
  redisUrl: string;
  requests: number;
  windowMs: number;
  prefix?: string;
  timeoutMs?: number;
  log?: Logger;
}): RateLimiter {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const redis = new IORedis(opts.redisUrl, {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    lazyConnect: false,
  });
  redis.on("error", () => {});
  // Without an offline queue a command sent while the connection is still being made fails at once:
  // a freshly started API process would let everything through for 5 s. It waits for the connection
  // instead, as long as it would wait for a command; the requests of a burst share one wait.
  let connecting: Promise<unknown> | null = null;
  const ready = () => {
    if (redis.status === "ready") return undefined;
    connecting ??= once(redis, "ready", { signal: AbortSignal.timeout(timeoutMs) }).finally(() => {
      connecting = null;
    });
    return connecting;
  };
  const prefix = `${opts.prefix ?? "site"}:rl`;
  let downUntil = 0;
  let lastWarn = 0;
  const open = (): RateDecision => ({
    allowed: true,
    limit: opts.requests,
    remaining: opts.requests,
    resetMs: opts.windowMs,
    windowMs: opts.windowMs,
  });
  return {
    shared: true,
    async take(id, cost = 1) {
      if (Date.now() < downUntil) return open();
      try {
        await ready();
        const now = Date.now();
        const window = Math.floor(now / opts.windowMs);
        const weight = 1 - (now % opts.windowMs) / opts.windowMs;
        const [ok, prev, curr] = (await redis.eval(
          TAKE,
          2,
          `${prefix}:${id}:${window - 1}`,
          `${prefix}:${id}:${window}`,
          String(weight),
          String(opts.requests),
          String(opts.windowMs * 2),
          String(cost),
        )) as [number, number, number];
        if (ok !== 1)
          return {
            allowed: false,
            limit: opts.requests,
            remaining: 0,
            resetMs: resetAfter(prev, curr, opts.requests, opts.windowMs, now),
            windowMs: opts.windowMs,
          };
        const estimate = slidingEstimate(prev, curr, opts.windowMs, now);
        return {
          allowed: true,
          limit: opts.requests,
          remaining: Math.max(0, Math.floor(opts.requests - estimate)),
          resetMs: opts.windowMs - (now % opts.windowMs),
          windowMs: opts.windowMs,
        };
      } catch (err) {
        const now = Date.now();
        downUntil = now + 5000;
        if (now - lastWarn > 60_000) {
          lastWarn = now;
          opts.log?.warn("rate limiter: Redis unavailable, letting requests through", { cause: String(err) });
        }
        return open();
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** The limiter the configuration asks for: none (RATE_LIMIT_REQUESTS=0), Redis when set, else in process. */
export function openRateLimiter(config: Config, log?: Logger): RateLimiter | undefined {
  const { requests, windowMs } = config.rateLimit;
  if (requests <= 0) return undefined;
  if (config.redisUrl)
    return createRedisRateLimiter({
      redisUrl: config.redisUrl,
      requests,
      windowMs,
      prefix: config.queuePrefix,
      timeoutMs: config.timeouts.redisCommandMs,
      log,
    });
  return createMemoryRateLimiter({ requests, windowMs });
}
