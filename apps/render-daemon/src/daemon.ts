import type { Runtime } from "@site/runtime";

/** Starts the render daemon on a runtime; it waits for render jobs (the render issue fills this in). */
export async function startRenderDaemon(rt: Runtime): Promise<{ stop(): Promise<void> }> {
  rt.log.info("render daemon waiting for work");
  return { stop: async () => {} };
}
