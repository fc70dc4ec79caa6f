/** The guarded fetch: https only, public addresses only (checked, resolved once, pinned), capped. */
export * from "./src/address.ts";
export * from "./src/guarded_fetch.ts";
export * from "./src/tls_fixture.ts";
