import type { Static, TSchema } from "@sinclair/typebox";
import type { InWork, Principal, Scope } from "@site/domain/core";
import type { AppDeps } from "../deps.ts";
import { type OperationName, scopeOf } from "../scopes.ts";

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
  operation: OperationName;
  /**
   * The scope the key needs: OPERATION_SCOPES of `operation`, never declared by the tool itself; null
   * where the route takes any key of the organization (one site's read).
   */
  scope: Scope | null;
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

/**
 * Declares a tool with its argument type inferred from its input schema; its scope is the one of the
 * REST operation it names (OPERATION_SCOPES), so tool and route cannot disagree.
 */
export function tool<S extends TSchema>(t: Omit<Tool<S>, "scope">): Tool {
  return { ...t, scope: scopeOf(t.operation) } as unknown as Tool;
}
