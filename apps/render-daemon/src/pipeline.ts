import type { Config, Logger } from "@site/config";
import type { ObjectStore } from "@site/storage";
import type { ChromiumPipeline } from "./chromium_pipeline.ts";

/**
 * Starts the browser pool and the warm compositor. `store` shares plates between daemons (with the
 * plate lock on REDIS_URL); `warm: false` skips warming the featured styles' plates at start. Chromium
 * is loaded only when called (the import below); the type import is erased.
 */
export async function createRenderPipeline(opts: {
  config: Config;
  log: Logger;
  store?: ObjectStore | null;
  warm?: boolean;
}): Promise<ChromiumPipeline> {
  const { createPipeline } = await import("./chromium_pipeline.ts");
  return createPipeline(opts);
}
