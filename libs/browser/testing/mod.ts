/** Test support for browser tests: pages served on loopback and a deadline poll. */

export * from "./escape_pages.ts";
export * from "./pages.ts";
export * from "./processes.ts";
export * from "./settle_pages.ts";
