/** Webhook delivery settings (CONTRACT "Webhooks"; decisions 0840–0845). */
export type WebhookSettings = {
  /**
   * WEBHOOK_RETRY_SCHEDULE_S: seconds to wait after each failed try before the next (comma-separated);
   * a delivery is tried once plus once per entry. Default about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
   */
  retryScheduleS: number[];
  /**
   * WEBHOOK_TIMEOUT_MS: one try's deadline (connect, send, answer); default 15 s (Standard Webhooks
   * 1.0, "Request timeouts": somewhere between 15 and 30 s; decision 1401).
   */
  timeoutMs: number;
  /** WEBHOOK_DISABLE_AFTER_S: an endpoint failing without a success for this long is disabled (5 days). */
  disableAfterS: number;
  /** WEBHOOK_CONCURRENCY: tries in flight per sending process. */
  concurrency: number;
  /** WEBHOOK_ORG_CONCURRENCY: tries in flight per organization, across every process. */
  orgConcurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: tries in flight per endpoint, across every process. */
  endpointConcurrency: number;
  /** WEBHOOK_LEASE_MS: how long a claimed delivery stays claimed before another process may take it. */
  leaseMs: number;
  /** WEBHOOK_SWEEP_EVERY_MS: how often due deliveries are looked for when no notice woke the dispatcher. */
  sweepEveryMs: number;
  /**
   * WEBHOOK_RETENTION_S: delivered and failed deliveries settled longer ago than this are deleted, and
   * events with no delivery left once this old (decision 0845); default 30 days.
   */
  retentionS: number;
};

type Env = Record<string, string | undefined>;

/** The default retry schedule, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

function int(env: Env, name: string, fallback: number, min: number, fail: (m: string) => Error): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw fail(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

/** Reads the WEBHOOK_* settings; `fail` builds the boot error for a bad value. */
export function webhookSettings(env: Env, fail: (message: string) => Error): WebhookSettings {
  const raw = env.WEBHOOK_RETRY_SCHEDULE_S;
  let retryScheduleS = DEFAULT_WEBHOOK_RETRY_SCHEDULE_S;
  if (raw !== undefined && raw.trim() !== "") {
    retryScheduleS = raw.split(",").map((s) => Number(s.trim()));
    if (retryScheduleS.some((n) => !Number.isFinite(n) || n < 0) || retryScheduleS.length > 50)
      throw fail(`WEBHOOK_RETRY_SCHEDULE_S must be comma-separated seconds (at most 50), got "${raw}"`);
  }
  return {
    retryScheduleS,
    timeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 15_000, 100, fail),
    disableAfterS: int(env, "WEBHOOK_DISABLE_AFTER_S", 5 * 24 * 3600, 1, fail),
    concurrency: int(env, "WEBHOOK_CONCURRENCY", 32, 1, fail),
    orgConcurrency: int(env, "WEBHOOK_ORG_CONCURRENCY", 8, 1, fail),
    endpointConcurrency: int(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 4, 1, fail),
    leaseMs: int(env, "WEBHOOK_LEASE_MS", 120_000, 1000, fail),
    sweepEveryMs: int(env, "WEBHOOK_SWEEP_EVERY_MS", 5_000, 50, fail),
    retentionS: int(env, "WEBHOOK_RETENTION_S", 30 * 86_400, 60, fail),
  };
}
