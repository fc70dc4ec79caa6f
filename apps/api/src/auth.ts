import { Elysia } from "elysia";
import {
  authenticate,
  type Context,
  type Principal,
  rateLimitHeaders,
  requireScope,
  type Scope,
} from "@site/domain/core";
import { bearer } from "./schemas.ts";

/** The principal of each request being served: authenticated once, read by every hook that needs it. */
export type PrincipalCache = {
  /** Authenticates the request's bearer key (once per request) and returns who is calling. */
  of(request: Request): Promise<Principal>;
  /** The principal of a request its route authenticated, or undefined (a public route, or not yet). */
  peek(request: Request): Promise<Principal> | undefined;
};

/** A PrincipalCache over `ctx`: transform and resolve run at different points of one request. */
export function principalCache(ctx: Context): PrincipalCache {
  const seen = new WeakMap<Request, Promise<Principal>>();
  return {
    of(request) {
      let pending = seen.get(request);
      if (!pending) {
        pending = authenticate(ctx, request.headers.get("authorization"));
        seen.set(request, pending);
      }
      return pending;
    },
    peek: (request) => seen.get(request),
  };
}

/**
 * The route options that declare authentication, once per route:
 * - `scope: "content:write"` — a bearer key carrying that scope (401, then 403);
 * - `authenticated: true` — any valid key; the handler checks scopes itself (the MCP endpoint, per tool).
 * Both authenticate in `transform`, which runs before body validation, so 401/403 win over 400
 * (decision 0003), and hand the handler its `principal`; both add the bearer requirement to the
 * route's OpenAPI entry.
 */
export function authMacros(ctx: Context, principals: PrincipalCache = principalCache(ctx)) {
  const principalOf = principals.of;
  const resolve = async ({ request }: { request: Request }) => ({ principal: await principalOf(request) });
  return new Elysia().macro({
    scope: (scope: Scope) => ({
      detail: { security: bearer },
      async transform({
        request,
        set,
      }: {
        request: Request;
        set: { headers: Record<string, string | number> };
      }) {
        const principal = await principalOf(request);
        if (principal.rate) Object.assign(set.headers, rateLimitHeaders(principal.rate));
        requireScope(principal, scope);
      },
      resolve,
    }),
    authenticated: {
      detail: { security: bearer },
      async transform({
        request,
        set,
      }: {
        request: Request;
        set: { headers: Record<string, string | number> };
      }) {
        const principal = await principalOf(request);
        if (principal.rate) Object.assign(set.headers, rateLimitHeaders(principal.rate));
      },
      resolve,
    },
  });
}

/** The plugin every authenticated route file uses, so its routes accept `scope`/`authenticated`. */
export type AuthMacros = ReturnType<typeof authMacros>;
