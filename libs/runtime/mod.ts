/** Builds the shared dependencies of every app from the configuration (database, and the drivers). */
export { openRuntime, type Runtime } from "./src/runtime.ts";
