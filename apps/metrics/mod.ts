/** The metrics app: the hourly social snapshot collector. */
export * from "./src/service.ts";
export * from "./src/collector.ts";
