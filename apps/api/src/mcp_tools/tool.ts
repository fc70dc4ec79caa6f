import type { Static, TSchema } from "@sinclair/typebox";
import type { InWork, Principal, Scope } from "@site/domain/core";
import type { AppDeps } from "../deps.ts";
import { type DeclaredOperation, scopeOfAccess } from "../operations.ts";

/** What a tool answers: the structured value, and a note for the agent (next step, embed) shown first. */
export type ToolOutput = { value: Record<string, unknown>; note?: string };

/**
 * What a keyed call (`idempotencyKey`) hands its tool: for work that commits in one transaction, the
 * callback that work runs inside it, so that the tool's answer (`answer(result)`, the ToolOutput the
 * tool then returns) commits with the work or not at all, as REST's answerInWork (decision 1411).
 * Undefined when the call names no key.
 */
export type ToolWork = {
  inWork<T>(answer: (result: T) => ToolOutput): InWork<T>;
};

/** A tool of the MCP server: its JSON Schema input is also its validation (TypeBox). */
export type Tool<S extends TSchema = TSchema> = {
  name: string;
  title: string;
  description: string;
  /** The REST operation (OpenAPI operationId) this tool mirrors: the tool needs that route's scope. */
  operation: string;
  /**
   * The scope the key needs: the one the route of `operation` declares, never declared by the tool
   * itself; null where the route takes any key of the organization (one site's read). Known once an
   * app is built (createApp binds the tools to its routes); reading it before throws.
   */
  readonly scope: Scope | null;
  input: S;
  /**
   * The model of the structured result (MCP `outputSchema`): a named model of the OpenAPI document, the
   * one the REST operation answers, or one composing it with what the tool adds (decision 0051), so an
   * agent and a generated client read one shape. Every tool declares one.
   */
  output: TSchema;
  readOnly: boolean;
  /** True when the tool reaches outside this service (an import fetches a URL, a render films a page). */
  openWorld?: boolean;
  run(deps: AppDeps, principal: Principal, args: Static<S>, work?: ToolWork): Promise<ToolOutput>;
};

/** Each operation's scope, as its route declares it: filled by `bindToolScopes` when an app is built. */
const ROUTE_SCOPES = new Map<string, Scope | null>();

/** Declares a tool with its argument type inferred from its input schema (its scope: `withRouteScope`). */
export function tool<S extends TSchema>(t: Omit<Tool<S>, "scope">): Tool {
  return t as unknown as Tool;
}

/**
 * The tool whose scope is the one the route of the operation it names declares (decision 1531), so
 * tool and route cannot disagree: read when used, from the binding createApp makes.
 */
export function withRouteScope(t: Tool): Tool {
  const { scope: _none, ...declared } = t as Tool & { scope?: unknown };
  return Object.defineProperty(declared, "scope", {
    enumerable: true,
    get(): Scope | null {
      const scope = ROUTE_SCOPES.get(t.operation);
      if (scope === undefined)
        throw new Error(`tool ${t.name}: no app has bound operation ${t.operation} yet`);
      return scope;
    },
  }) as Tool;
}

/**
 * Binds each tool to the route of its operation: the tool needs the scope the route declares. Throws
 * when a tool names an operation no route declares, or one no API key calls (public, operator).
 */
export function bindToolScopes(tools: readonly Tool[], operations: Map<string, DeclaredOperation>): void {
  for (const t of tools) {
    const op = operations.get(t.operation);
    if (!op) throw new Error(`tool ${t.name} mirrors ${t.operation}, which no route declares`);
    const scope = scopeOfAccess(op.access);
    if (scope === undefined) throw new Error(`tool ${t.name} mirrors ${t.operation}, which no API key calls`);
    ROUTE_SCOPES.set(t.operation, scope);
  }
}
