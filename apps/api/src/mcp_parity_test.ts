import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { PARITY, parityExceptionsMarkdown } from "./mcp_tools/parity.ts";
import { TOOLS } from "./mcp_tools.ts";
import { modelJson, namedModels } from "./openapi_document.ts";

// Parity as data (issue 36; CONTRACT "Agents over MCP: every job without REST"): one table lists every
// REST operation with its MCP tool or the reason it has none; this walks the live OpenAPI document.

type Json = any;
let h: TestApp;
/** The models the document names (`named()` on the model), by name. */
let NAMED_MODELS: Record<string, TSchema> = {};
let doc: Json;
/** operationId → method, path, operation. */
const ops = new Map<string, { method: string; path: string; op: Json }>();

beforeAll(async () => {
  h = await buildTestApp();
  NAMED_MODELS = Object.fromEntries(namedModels(h.app));
  doc = await (await h.call("GET", "/swagger/json")).json();
  for (const [path, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json))
      ops.set((op as Json).operationId, { method: method.toUpperCase(), path, op });
});
afterAll(() => h.close());

/** The name a model is named by, by its JSON. */
function nameOf(model: Json): string | undefined {
  const json = JSON.stringify(modelJson(model));
  return Object.entries(NAMED_MODELS).find(([, m]) => JSON.stringify(modelJson(m)) === json)?.[0];
}

/** The named model a 2xx JSON answer of the operation references, if any. */
function restModel(op: Json): string | undefined {
  for (const [status, r] of Object.entries(op.responses ?? {}) as [string, Json][]) {
    const ref = r?.content?.["application/json"]?.schema?.$ref as string | undefined;
    if (status.startsWith("2") && ref) return ref.replace("#/components/schemas/", "");
  }
  return undefined;
}

describe("every REST operation has a tool or a reason (parity table)", () => {
  test("the table and the live document list the same operations", () => {
    expect(ops.size).toBeGreaterThan(90);
    const missing = [...ops.keys()].filter((id) => !(id in PARITY));
    expect(missing, "operations with neither a tool nor a reason in mcp_tools/parity.ts").toEqual([]);
    const stale = Object.keys(PARITY).filter((id) => !ops.has(id));
    expect(stale, "rows naming no operation of the document").toEqual([]);
  });

  test("a row's tool mirrors that operation, under its scope, answering its named model", () => {
    for (const [id, row] of Object.entries(PARITY)) {
      if (!("tool" in row)) continue;
      const t = TOOLS.find((x) => x.name === row.tool);
      expect(t, `${id}: tool ${row.tool} exists`).toBeDefined();
      expect(t!.operation, `${row.tool} mirrors ${id}`).toBe(id as never);
      const { op } = ops.get(id)!;
      expect(t!.scope, `${row.tool} needs ${id}'s scope`).toBe(op["x-required-scope"] ?? null);
      // The tool's output is a named model: REST's, or one composing REST's (decision 0051).
      const named = nameOf(t!.output);
      expect(named, `${row.tool} answers a named model`).toBeDefined();
      // upload_media uploads and completes in one call: it answers the completion's model.
      const rest = restModel(row.tool === "upload_media" ? ops.get("completeMediaUpload")!.op : op);
      // upsert_collection_items writes up to 100 items in one call (REST's POST adds one): it answers
      // their list, each REST's item model.
      if (row.tool === "upsert_collection_items") {
        const item = "#/components/schemas/CollectionItem";
        expect(doc.components.schemas[rest!].properties.item.$ref).toBe(item);
        expect(doc.components.schemas[named!].properties.items.items.$ref).toBe(item);
        continue;
      }
      if (rest && named !== rest)
        expect(JSON.stringify(doc.components.schemas[named!]), `${named} composes ${rest}`).toContain(
          `#/components/schemas/${rest}`,
        );
    }
  });

  test("every tool is in the table, as the tool of the operation it mirrors", () => {
    for (const t of TOOLS) {
      const row = PARITY[t.operation];
      expect(row, `${t.name}'s operation ${t.operation} has a row`).toBeDefined();
      // Several tools may share one operation only when the table names one of them; the others are
      // checked by name here.
      if ("none" in row!) throw new Error(`${t.name} mirrors ${t.operation}, whose row says no tool`);
    }
    const named = new Set(Object.values(PARITY).flatMap((r) => ("tool" in r ? [r.tool] : [])));
    for (const t of TOOLS) expect(named.has(t.name), `${t.name} is named by its operation's row`).toBe(true);
  });

  test("the reasons say what the document says: public rows take no key, operator rows the operator's", () => {
    for (const [id, row] of Object.entries(PARITY)) {
      if (!("none" in row)) continue;
      const { op } = ops.get(id)!;
      if (row.none === "public") expect(op.security, id).toEqual([]);
      if (row.none === "operator") expect(op.security, id).toEqual([{ operatorToken: [] }]);
      // An API key may call these; the OAuth callback and the signed PUT carry their own credential.
      if (row.none === "gap" || row.none === "bytes" || row.none === "browser") {
        const ownCredential = ["completeSocialOAuth", "receiveSignedUpload"].includes(id);
        expect(op.security, id).toEqual(ownCredential ? [] : [{ bearerAuth: [] }]);
      }
    }
  });

  test("the README's MCP section is the table: every tool by name, and the exceptions as generated", async () => {
    const readme = await Bun.file(new URL("../../../README.md", import.meta.url)).text();
    const section = readme.slice(
      readme.indexOf("## AI agents: the MCP server"),
      readme.indexOf("## Configuration"),
    );
    for (const t of TOOLS) expect(section, `README names ${t.name}`).toContain(`\`${t.name}\``);
    const paths = Object.fromEntries([...ops].map(([id, { method, path }]) => [id, `${method} ${path}`]));
    expect(section).toContain(parityExceptionsMarkdown(paths));
  });
});
