import type { Runtime } from "@site/runtime";

/** Starts the metrics collector's schedule on a runtime (the social issue fills this in). */
export async function startMetrics(rt: Runtime): Promise<{ stop(): Promise<void> }> {
  rt.log.info("metrics collector waiting for work");
  return { stop: async () => {} };
}
