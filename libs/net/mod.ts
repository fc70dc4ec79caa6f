/** The guarded fetch: https only, public addresses only (checked, resolved once, pinned), capped; the egress proxy. */
export * from "./src/address.ts";
export * from "./src/egress_proxy.ts";
export * from "./src/guarded_fetch.ts";
export * from "./src/local_network.ts";
