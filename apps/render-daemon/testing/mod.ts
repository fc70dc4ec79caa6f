/** Test support for the render daemon: real processes (a daemon, a Redis) and the stub pipeline (1503). */

export * from "./armed_pages.ts";
export * from "./processes.ts";
export * from "./renders.ts";
export * from "./stub_pipeline.ts";
