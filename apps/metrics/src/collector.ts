import type { Context } from "@site/domain/core";
import { type CollectOptions, type CollectReport, captureDueSnapshots } from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";

/** One collector pass with the configured platform adapters (what the hourly schedule and `--once` run). */
export function runCollectorPass(ctx: Context, opts: CollectOptions = {}): Promise<CollectReport> {
  return captureDueSnapshots(ctx, createPlatformAdapters(ctx), opts);
}
