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
 * How an operation is called, written into its `detail` by the access macros below (and read by the
 * OpenAPI document, which adds 401/403, and by the MCP tools, which take their scope from it).
 */
export type Access =
  | { kind: "scope"; scope: Scope }
  | { kind: "anyKey" }
  | { kind: "ownBearer" }
  | { kind: "operatorToken" }
  | { kind: "public" };

/** The `detail` key the access macros write; the document reads it, then drops it. */
export const ACCESS = "x-access";

/**
 * The route options every route declares once (decision 1530): `operation: "createSite"` (its OpenAPI
 * operationId, a verb), and how it is called: `public: true` (no credential), `operatorToken: true`
 * (the handler checks OPERATOR_TOKEN) or `ownBearer: true` (an API key the handler checks). Routes
 * that take an API key use `authMacros`, which adds `scope` and `anyKey`.
 * scripts/checks/operations_test.ts fails on a route that declares no id or no access.
 */
export const operationMacros = new Elysia({ name: "operation-macros" }).macro({
  operation: (id: string) => ({ detail: { operationId: id } }),
  public: { detail: { security: [], [ACCESS]: { kind: "public" } satisfies Access } },
  // A bearer API key the route checks itself (the MCP endpoint: its 401 names RFC 9728 metadata, and
  // each tool needs its own route's scope).
  ownBearer: { detail: { security: bearer, [ACCESS]: { kind: "ownBearer" } satisfies Access } },
  operatorToken: {
    detail: {
      security: [{ operatorToken: [] as string[] }],
      [ACCESS]: { kind: "operatorToken" } satisfies Access,
    },
  },
});

/**
 * The access options of a route called with an API key, beside `operation`:
 * - `scope: "content:write"` — a bearer key carrying that scope (401, then 403);
 * - `anyKey: true` — any valid key of the organization (one site's read). The MCP endpoint, which
 *   checks scopes per tool, authenticates itself (`ownBearer`).
 * Both authenticate in `transform`, which runs before body validation, so 401/403 win over 400
 * (decision 0003), and hand the handler its `principal`; both add the bearer requirement to the
 * route's OpenAPI entry, and `scope` its scope as `x-required-scope` (decision 0750). The document adds
 * the 401 (and, with a scope, the 403) these answer: a route lists only its own errors. An MCP tool
 * names its route's `operation` and needs the same scope (mcp_tools/tool.ts).
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
  return new Elysia().use(operationMacros).macro({
    scope: (scope: Scope) => ({
      detail: {
        security: bearer,
        "x-required-scope": scope,
        [ACCESS]: { kind: "scope", scope } satisfies Access,
      },
      transform: guard(scope),
      resolve,
    }),
    anyKey: {
      detail: { security: bearer, [ACCESS]: { kind: "anyKey" } satisfies Access },
      transform: guard(null),
      resolve,
    },
  });
}

/** The plugin every authenticated route file uses, so its routes accept `operation`, `scope`, `anyKey`. */
export type AuthMacros = ReturnType<typeof authMacros>;
