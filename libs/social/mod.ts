/** The social platform adapters: one per platform, calling its public HTTP API. */
export * from "./src/adapters.ts";
