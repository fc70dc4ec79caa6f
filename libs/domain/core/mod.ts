/** Core rules every area uses: errors, request context, secrets, API keys and scopes, ids, keyset pagination, organizations, members and sessions. */
export * from "./auth.ts";
export * from "./context.ts";
export * from "./credits.ts";
export * from "./errors.ts";
export * from "./html_escape.ts";
export * from "./idempotency.ts";
export * from "./ids.ts";
export * from "./key_cache.ts";
export * from "./models.ts";
export * from "./operator_lists.ts";
export * from "./organizations.ts";
export * from "./owned_site.ts";
export * from "./pagination.ts";
export * from "./principal.ts";
export * from "./rate_limit.ts";
export * from "./secrets.ts";
export * from "./unavailable.ts";
