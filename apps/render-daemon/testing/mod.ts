/** Test support for the render daemon: real processes (a daemon, a Redis) and the stub pipeline (1503). */

export * from "./processes.ts";
export * from "./stub_pipeline.ts";
