import { type CollectOptions, type CollectReport, type Context, captureDueSnapshots } from "@site/domain";
import { createPlatformAdapters } from "./platforms/mod.ts";

/** One collector pass with the configured platform adapters (what the hourly schedule and `--once` run). */
export function runCollectorPass(ctx: Context, opts: CollectOptions = {}): Promise<CollectReport> {
  return captureDueSnapshots(ctx, createPlatformAdapters(ctx.config), opts);
}
