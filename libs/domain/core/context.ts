import type { Clock, Config, Logger } from "@site/config";
import type { Database } from "@site/db";
import type { KeyCache } from "./key_cache.ts";
import type { RateLimiter } from "./rate_limit.ts";

/** What every domain function may use: settings, the database, time and the log. */
export type Context = {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  /** Verified API keys kept in process (serving processes); revocations reach it at once. */
  keys?: KeyCache;
  /** Per-key request limits (RATE_LIMIT_REQUESTS); absent: none. */
  limiter?: RateLimiter;
};
