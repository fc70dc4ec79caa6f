import {
  authenticate,
  type Context,
  type Principal,
  rateLimitHeaders,
  requireScope,
  type Scope,
} from "@site/domain/core";
import { Elysia } from "elysia";
import { bearer } from "./schemas.ts";
import { OPERATION_SCOPES, type OperationName } from "./scopes.ts";

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
 * - `operation: "getSites"` — the route is that operation of OPERATION_SCOPES (its OpenAPI operationId)
 *   and needs the table's scope, the one its MCP tool needs too; a route an MCP tool mirrors says this;
 * - `scope: "content:write"` — a bearer key carrying that scope (401, then 403);
 * - `authenticated: true` — any valid key; the handler checks scopes itself (the MCP endpoint, per tool).
 * All authenticate in `transform`, which runs before body validation, so 401/403 win over 400
 * (decision 0003), and hand the handler its `principal`; all add the bearer requirement to the
 * route's OpenAPI entry, and a scoped one its scope as `x-required-scope` (decision 0750).
 */
export function authMacros(ctx: Context, principals: PrincipalCache = principalCache(ctx)) {
  const principalOf = principals.of;
  const resolve = async ({ request }: { request: Request }) => ({ principal: await principalOf(request) });
  const guard = (scope: Scope | null) =>
    async function transform({
      request,
      set,
    }: {
      request: Request;
      set: { headers: Record<string, string | number> };
    }) {
      const principal = await principalOf(request);
      if (principal.rate) Object.assign(set.headers, rateLimitHeaders(principal.rate));
      if (scope) requireScope(principal, scope);
    };
  return new Elysia().macro({
    operation: (name: OperationName) => ({
      detail: {
        security: bearer,
        "x-operation": name,
        // An operation open to any key of the organization documents no scope.
        ...(OPERATION_SCOPES[name] ? { "x-required-scope": OPERATION_SCOPES[name] } : {}),
      },
      transform: guard(OPERATION_SCOPES[name]),
      resolve,
    }),
    scope: (scope: Scope) => ({
      detail: { security: bearer, "x-required-scope": scope },
      transform: guard(scope),
      resolve,
    }),
    authenticated: {
      detail: { security: bearer },
      transform: guard(null),
      resolve,
    },
  });
}

/** The plugin every authenticated route file uses, so its routes accept `scope`/`authenticated`. */
export type AuthMacros = ReturnType<typeof authMacros>;
