import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SCOPES, type Scope } from "@site/domain/core";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { TOOLS } from "./mcp_tools.ts";

// Each MCP tool needs exactly the scope of the REST operation it mirrors (issue 25, LOW "MCP tools:
// each with its REST route's scope, checked by one table that both use"; decision 0750). The REST side
// is read from the live OpenAPI document (`x-required-scope`, written by the route's auth macro), and
// both sides are then tried with keys that lack the scope: REST answers 403, MCP hides and refuses the
// tool. The old code served list_screenshot_styles (REST: content:write) to a content:read key.

type Json = any;
let h: TestApp;
let mcp: AppServer;
let doc: Json;
/** The document's operations by operationId, with their method and path. */
const ops = new Map<string, { method: string; path: string; op: Json }>();
/** A key per scope: it carries every scope but that one. */
const lacking = new Map<Scope, string>();
/** A key per scope: it carries only that one. */
const only = new Map<Scope, string>();
/** A key with every scope. */
let full: string;

beforeAll(async () => {
  mcp = listenApp();
  h = await buildTestApp({ env: { PUBLIC_BASE_URL: mcp.base } });
  mcp.serve(h);
  doc = await (await h.call("GET", "/swagger/json")).json();
  for (const [path, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json))
      ops.set((op as Json).operationId, { method: method.toUpperCase(), path, op });
  const owner = await h.seedOrg({ scopes: [...SCOPES] });
  full = owner.key;
  const { createApiKey } = await import("@site/domain/core");
  for (const scope of SCOPES) {
    const others = SCOPES.filter((s) => s !== scope);
    const key = (s: Scope[]) =>
      createApiKey(h.ctx, { orgId: owner.org.id, userId: owner.user.id, scopes: s }).then((k) => k.key);
    lacking.set(scope, await key(others));
    only.set(scope, await key([scope]));
  }
});
afterAll(async () => {
  mcp.stop();
  await h.close();
});

async function listed(key: string): Promise<string[]> {
  const client = await mcpClient(mcp, key);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

async function withClient<T>(key: string, run: (c: Client) => Promise<T>): Promise<T> {
  const client = await mcpClient(mcp, key);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

/** An OpenAPI path with every parameter filled (the scope is checked before the ids are looked up). */
const concrete = (path: string) =>
  path
    .replace("{locale}", "en")
    .replace("{key}", "team")
    .replace(/\{\w+\}/g, "00000000-0000-4000-8000-000000000000");

describe("one scope per operation, REST and MCP alike", () => {
  test("every tool names a documented REST operation and needs the scope that operation declares", async () => {
    // Every tool there is, as a key with every scope sees it.
    expect(new Set(await listed(full))).toEqual(new Set(TOOLS.map((t) => t.name)));
    expect(TOOLS.length).toBeGreaterThan(30);
    for (const t of TOOLS) {
      const rest = ops.get(t.operation);
      expect(rest, `${t.name} mirrors ${t.operation}, an operation of the document`).toBeDefined();
      // A tool open to any key (get_site) mirrors a route that documents no scope.
      expect(rest!.op["x-required-scope"] ?? null, `${t.name} vs ${rest!.method} ${rest!.path}`).toBe(
        t.scope,
      );
      expect(rest!.op.security).toEqual([{ bearerAuth: [] }]);
    }
  });

  test("every route open to any key says so; every scoped route documents its scope", () => {
    for (const [, { method, path, op }] of ops) {
      const bearer = (op.security ?? []).some((s: Json) => s.bearerAuth);
      if (bearer && path !== "/mcp" && op["x-required-scope"] === undefined)
        // Routes open to any key of the organization (one site's read) say so in their description.
        expect(op.description ?? "", `${method} ${path} has no scope: it says "any key"`).toContain(
          "Any key",
        );
      if (op["x-required-scope"] !== undefined) expect(SCOPES).toContain(op["x-required-scope"]);
    }
  });

  test("REST refuses the mirrored operation to a key without its scope (403), so the document tells the truth", async () => {
    for (const t of TOOLS) {
      if (t.scope === null) continue;
      const { method, path, op } = ops.get(t.operation)!;
      const res = await h.call(method, concrete(path), {
        key: lacking.get(t.scope),
        body: op.requestBody ? {} : undefined,
      });
      expect(res.status, `${method} ${path} without ${t.scope}`).toBe(403);
      const body = (await res.json()) as Json;
      expect(body.error.code).toBe("FORBIDDEN");
      expect(body.error.message).toContain(t.scope);
    }
  }, 60_000);

  test("MCP: a key without a tool's scope is not shown the tool and is refused it; a key with only that scope is shown it", async () => {
    for (const scope of SCOPES) {
      const needing = TOOLS.filter((t) => t.scope === scope).map((t) => t.name);
      const open = TOOLS.filter((t) => t.scope === null).map((t) => t.name);
      const without = await listed(lacking.get(scope)!);
      for (const name of needing)
        expect(without, `${name} is hidden from a key without ${scope}`).not.toContain(name);
      const withOnly = await listed(only.get(scope)!);
      expect(new Set(withOnly)).toEqual(new Set([...needing, ...open]));
      if (needing.length === 0) continue;
      await withClient(lacking.get(scope)!, async (client) => {
        for (const name of needing) {
          const res = await callTool(client, name, {});
          expect(res.isError, `${name} without ${scope}`).toBe(true);
          expect(res.error.code, name).toBe("FORBIDDEN");
          expect(res.error.message, name).toContain(scope);
        }
      });
    }
  }, 60_000);

  test("the three tools that once asked less than their route: REST and MCP now agree", async () => {
    const site = await h.newSite(full);
    const reader = only.get("content:read")!;
    // list_screenshot_styles and get_screenshot: content:write, as the specification's routes.
    const styles = await h.call("GET", `/api/v1/sites/${site.id}/media/screenshot-styles`, { key: reader });
    expect(styles.status).toBe(403);
    await withClient(reader, async (client) => {
      const res = await callTool(client, "list_screenshot_styles", { siteId: site.id });
      expect(res.isError).toBe(true);
      expect(res.error.code).toBe("FORBIDDEN");
      const poll = await callTool(client, "get_screenshot", {
        siteId: site.id,
        renderId: "00000000-0000-4000-8000-000000000000",
      });
      expect(poll.error.code).toBe("FORBIDDEN");
      // list_sites: reading, on both sides (a content:read key lists sites over REST too).
      const sites = await callTool(client, "list_sites", {});
      expect(sites.isError).toBeFalsy();
      expect(sites.structuredContent.sites.map((s: Json) => s.id)).toContain(site.id);
    });
    const rest = await h.call("GET", "/api/v1/sites", { key: reader });
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as Json).sites.map((s: Json) => s.id)).toContain(site.id);
    const writer = only.get("content:write")!;
    const ok = await h.call("GET", `/api/v1/sites/${site.id}/media/screenshot-styles`, { key: writer });
    expect(ok.status).toBe(200);
    await withClient(writer, async (client) => {
      const res = await callTool(client, "list_screenshot_styles", { siteId: site.id });
      expect(res.isError, res.content[0]?.text).toBeFalsy();
      expect(res.structuredContent.styles.length).toBeGreaterThan(0);
    });
  });
});
