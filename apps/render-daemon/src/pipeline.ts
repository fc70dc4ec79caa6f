import type { Config, Logger } from "@site/config";
import type { RenderPipeline } from "./render_types.ts";

/** Starts the browser pool and the warm compositor. */
export async function createRenderPipeline(opts: { config: Config; log: Logger }): Promise<RenderPipeline> {
  const { createPipeline } = await import("./chromium_pipeline.ts");
  return createPipeline(opts);
}
