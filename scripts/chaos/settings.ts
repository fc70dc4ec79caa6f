/** The chaos run's bounds and load, shared by the stacks it starts and the verdicts it gives. */

/** Requests a second each scenario's load plays (CHAOS_RPS, default 4). */
export const RPS = Number(process.env.CHAOS_RPS ?? 4);

/** The bounds the apps run with; "no answer slower than the configured bound" is checked against BOUND_MS. */
export const BOUNDS = {
  DB_CONNECT_TIMEOUT_MS: "1000",
  DB_STATEMENT_TIMEOUT_MS: "5000",
  REDIS_COMMAND_TIMEOUT_MS: "1000",
  STORAGE_TIMEOUT_MS: "2000",
  READY_CHECK_TIMEOUT_MS: "500",
  IMPORT_TIMEOUT_MS: "3000",
  SHUTDOWN_GRACE_MS: "4000",
  RETRY_AFTER_SECONDS: "2",
};
/**
 * The longest answer allowed: the slowest bounded path is an import (IMPORT_TIMEOUT_MS, 3 s) whose
 * storage write then waits STORAGE_TIMEOUT_MS twice (two attempts); a SIGTERM adds at most the grace.
 */
export const BOUND_MS = 3000 + 2 * 2000 + 1000;
/** "Automatic recovery within 5 s of the dependency's return" (issue 14); renders 10 s (issue 18.4). */
export const RECOVERY_MS = 5000;
/** How soon renders must run again after the daemon's return. */
export const RENDER_RECOVERY_MS = 10_000;
