/** The render daemon: takes render jobs, films, frames and composes, stores the frame. */

export type { ChromiumPipeline } from "./src/chromium_pipeline.ts";
export { encodeFrames, ffmpegArgs } from "./src/clip/encoder.ts";
export type { Compositor } from "./src/compose/compositor.ts";
export * from "./src/daemon.ts";
export { type ArmedPage, armPage, DEFAULT_TIMINGS, filmPage, warmPage } from "./src/film/capture.ts";
export * from "./src/frame/encode.ts";
export * from "./src/pipeline.ts";
export { createRenderMetrics, type RenderMetrics, serveMetrics } from "./src/render_metrics.ts";
export * from "./src/render_types.ts";
