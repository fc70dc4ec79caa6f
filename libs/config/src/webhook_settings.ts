import { ConfigError } from "./config_error.ts";
import { type Env, intSetting, rawSetting } from "./read_setting.ts";
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_S } from "./settings.ts";

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

export { DEFAULT_WEBHOOK_RETRY_SCHEDULE_S };

/** Reads the WEBHOOK_* settings (declared in settings.ts); a bad value is a ConfigError naming it. */
export function webhookSettings(env: Env): WebhookSettings {
  const raw = rawSetting(env, "WEBHOOK_RETRY_SCHEDULE_S");
  let retryScheduleS = DEFAULT_WEBHOOK_RETRY_SCHEDULE_S;
  if (raw !== undefined && raw.trim() !== "") {
    retryScheduleS = raw.split(",").map((s) => Number(s.trim()));
    if (retryScheduleS.some((n) => !Number.isFinite(n) || n < 0) || retryScheduleS.length > 50)
      throw new ConfigError(
        `WEBHOOK_RETRY_SCHEDULE_S must be comma-separated seconds (at most 50), got "${raw}"`,
      );
  }
  return {
    retryScheduleS,
    timeoutMs: intSetting(env, "WEBHOOK_TIMEOUT_MS"),
    disableAfterS: intSetting(env, "WEBHOOK_DISABLE_AFTER_S"),
    concurrency: intSetting(env, "WEBHOOK_CONCURRENCY"),
    orgConcurrency: intSetting(env, "WEBHOOK_ORG_CONCURRENCY"),
    endpointConcurrency: intSetting(env, "WEBHOOK_ENDPOINT_CONCURRENCY"),
    leaseMs: intSetting(env, "WEBHOOK_LEASE_MS"),
    sweepEveryMs: intSetting(env, "WEBHOOK_SWEEP_EVERY_MS"),
    retentionS: intSetting(env, "WEBHOOK_RETENTION_S"),
  };
}
