import type { Config, Logger } from "@site/config";
import type { RenderPipeline } from "./pipeline.ts";

/** Placeholder until the pool and compositor land. */
export async function createPipeline(_opts: { config: Config; log: Logger }): Promise<RenderPipeline> {
  throw new Error("render pipeline not built yet");
}
