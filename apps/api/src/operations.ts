import type { Scope } from "@site/domain/core";
import type { AnyElysia } from "elysia";
import { ACCESS, type Access } from "./auth.ts";

/** One route as its declaration names it: operationId, method, path and how it is called. */
export type DeclaredOperation = { id: string; method: string; path: string; access: Access };

/**
 * A route of the document: OpenAPI knows these methods; a hidden route (the docs, bull-board) is none,
 * nor one whose path has a dot (the generator's `staticFile` rule: `/.well-known/…`).
 */
const HTTP_METHODS = new Set(["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]);

type RouteDetail = { operationId?: string; hide?: boolean; [ACCESS]?: Access };

/** The app's documented routes, each with what its declaration says (undefined where it says nothing). */
export function documentedRoutes(app: AnyElysia) {
  return app.routes
    .filter(
      (r) =>
        HTTP_METHODS.has(r.method) &&
        !r.path.includes(".") &&
        !(r.hooks?.detail as RouteDetail | undefined)?.hide,
    )
    .map((r) => {
      const detail = (r.hooks?.detail ?? {}) as RouteDetail;
      return { method: r.method, path: r.path, id: detail.operationId, access: detail[ACCESS] };
    });
}

/**
 * What is wrong with the app's route declarations: a route without an operation id or without access
 * (`scope`, `anyKey`, `ownBearer`, `operatorToken` or `public`; auth.ts), an id two routes declare.
 * scripts/checks/operations_test.ts fails on any.
 */
export function undeclaredRoutes(app: AnyElysia): string[] {
  const faults: string[] = [];
  const seen = new Set<string>();
  for (const r of documentedRoutes(app)) {
    if (!r.id) faults.push(`${r.method} ${r.path} declares no operation id (operation: "verbNoun")`);
    if (!r.access)
      faults.push(
        `${r.method} ${r.path} declares no access (scope, anyKey, ownBearer, operatorToken or public)`,
      );
    if (r.id && seen.has(r.id)) faults.push(`${r.method} ${r.path}: operation ${r.id} is declared twice`);
    if (r.id) seen.add(r.id);
  }
  return faults;
}

/** The operations of a built app by operationId, read from its routes' own declarations (auth.ts). */
export function declaredOperations(app: AnyElysia): Map<string, DeclaredOperation> {
  const out = new Map<string, DeclaredOperation>();
  for (const r of documentedRoutes(app))
    if (r.id && r.access) out.set(r.id, { id: r.id, method: r.method, path: r.path, access: r.access });
  return out;
}

/** The scope an API key needs for `op`: null for any key of the organization; undefined: no API key. */
export function scopeOfAccess(access: Access): Scope | null | undefined {
  if (access.kind === "scope") return access.scope;
  if (access.kind === "anyKey") return null;
  return undefined;
}
