/** The metrics app: the hourly social snapshot collector. */

export * from "./src/collector.ts";
export * from "./src/service.ts";
