import type { Context } from "@site/domain/core";
import {
  type CollectOptions,
  type CollectReport,
  captureDueSnapshots,
  checkTokenExpiry,
  renewLongLivedTokens,
} from "@site/domain/social";
import { apiVersionWarnings, createPlatformAdapters } from "@site/social";

/**
 * One collector pass with the configured platform adapters (what the hourly schedule and `--once` run):
 * first the warnings an operator must act on ahead of time (an API version near its sunset, tokens
 * without a refresh token near expiry, decisions 1010 and 1012), the background renewal of long-lived
 * tokens (decision 1491), then the due snapshots.
 */
export async function runCollectorPass(ctx: Context, opts: CollectOptions = {}): Promise<CollectReport> {
  const now = opts.now ?? ctx.clock.now();
  for (const w of apiVersionWarnings(ctx.config.social, now))
    ctx.log.warn("social API version", {
      setting: w.setting,
      version: w.version,
      sunset: w.sunset,
      message: w.message,
    });
  await checkTokenExpiry(ctx, now);
  const adapters = createPlatformAdapters(ctx);
  // Instagram's and Threads' 60-day tokens, renewed while they still can be, used or not (issue 33).
  await renewLongLivedTokens(ctx, adapters, now);
  return captureDueSnapshots(ctx, adapters, opts);
}
