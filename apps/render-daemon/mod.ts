/** The render daemon: takes render jobs, films, frames and composes, stores the frame. */
export * from "./src/daemon.ts";
export * from "./src/pipeline.ts";
export * from "./src/render_types.ts";
export * from "./src/frame/encode.ts";
export type { Compositor } from "./src/compose/compositor.ts";
export { createRenderMetrics, type RenderMetrics } from "./src/render_metrics.ts";
export { type ArmedPage, armPage, DEFAULT_TIMINGS, filmPage, warmPage } from "./src/film/capture.ts";
export { encodeFrames, ffmpegArgs } from "./src/clip/encoder.ts";
