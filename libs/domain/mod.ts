/** The rules the apps share: errors, auth and scopes, sites and templates, pages, accounts. */
export * from "./src/errors.ts";
export * from "./src/context.ts";
export * from "./src/secrets.ts";
export * from "./src/auth.ts";
export * from "./src/ids.ts";
export * from "./src/pagination.ts";
export * from "./src/slugs.ts";
export * from "./src/sites.ts";
export * from "./src/templates.ts";
export * from "./src/pages.ts";
export * from "./src/page_media.ts";
export * from "./src/accounts.ts";
export * from "./src/media_types.ts";
export * from "./src/media_grants.ts";
export * from "./src/media_quota.ts";
export * from "./src/media_library.ts";
