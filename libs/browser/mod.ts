/** Chromium for filming and hosted sign-in: discovery and launch flags, the address guard, the pool. */

export * from "./src/address_guard.ts";
export * from "./src/chromium.ts";
export * from "./src/extra_ca.ts";
export * from "./src/find_browser.ts";
export * from "./src/hosted_sign_in.ts";
export * from "./src/owned_dirs.ts";
export * from "./src/pool.ts";
export * from "./src/profiles.ts";
