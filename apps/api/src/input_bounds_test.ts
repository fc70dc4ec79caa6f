import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { renderError } from "./errors.ts";

type Json = any;

// Every line the app logs, at the default level (info), for the "no SQL in logs" checks.
const lines: string[] = [];
let h: TestApp;
let key: string;
let siteId: string;
let pageId: string;

beforeAll(async () => {
  h = await buildTestApp({ log: createLogger("info", {}, { sink: (l) => lines.push(l) }) });
  ({ key } = await h.seedOrg());
  const site = await h.call("POST", "/api/v1/sites", {
    key,
    body: { name: "Bounds", slug: `b-${Date.now()}` },
  });
  siteId = ((await site.json()) as Json).site.id;
  const page = await h.call("POST", `/api/v1/sites/${siteId}/pages`, {
    key,
    body: { path: "/p", title: "P", content: "# p" },
  });
  pageId = ((await page.json()) as Json).page.id;
});
afterAll(async () => {
  await h.close();
});

const deepArrays = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
const deepObjects = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;

async function expect400(res: Response, field: string) {
  const body = (await res.json()) as Json;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status: 400, code: "VALIDATION_ERROR" });
  expect(body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  expect(body.error.message).toContain(field);
  return body;
}

describe("untrusted input is bounded at the edge, for every route", () => {
  test("a JSON body nested 100,000 levels deep answers 400 VALIDATION_ERROR, never 500", async () => {
    // The whole body, and a field of it, nested that deep (the field's route validates that field).
    const routes: [string, string, string][] = [
      ["POST", "/api/v1/sites", "name"],
      ["POST", `/api/v1/sites/${siteId}/pages`, "content"],
      ["PATCH", `/api/v1/sites/${siteId}/pages/${pageId}`, "title"],
      ["POST", "/api/v1/social/posts", "content"],
      ["POST", `/api/v1/sites/${siteId}/media/import-url`, "url"],
    ];
    for (const [method, path, field] of routes) {
      for (const [body, named] of [
        [deepArrays(100_000), "body"],
        [deepObjects(100_000), "a"],
        [`{"${field}":${deepArrays(100_000)}}`, field],
        [`{"${field}":${deepObjects(100_000)}}`, field],
      ] as const) {
        const res = await h.call(method, path, { key, body });
        const out = await expect400(res, named);
        expect(out.error.message).toContain("nested");
      }
    }
    // The tool protocol parses its own body: the same bound applies there.
    const mcp = await h.call("POST", "/mcp", {
      key,
      body: deepArrays(100_000),
      headers: { accept: "application/json, text/event-stream" },
    });
    await expect400(mcp, "body");
  });

  test("nesting a little deeper than any real body is refused; real bodies pass", async () => {
    await expect400(await h.call("POST", "/api/v1/sites", { key, body: deepArrays(65) }), "body");
    const ok = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "hi", platformOverrides: { x: "hey" }, accounts: ["nope"] },
    });
    expect(ok.status).not.toBe(500);
  });

  test("a NUL character in any text field answers 400 naming the field", async () => {
    const nul = "a\u0000b";
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/v1/sites", { name: nul, slug: "nul-site" }, "name"],
      ["POST", "/api/v1/sites", { name: "ok", slug: "nul-site", template: nul }, "template"],
      ["POST", `/api/v1/sites/${siteId}/pages`, { path: "/n", title: "T", content: `# ${nul}` }, "content"],
      ["PATCH", `/api/v1/sites/${siteId}/pages/${pageId}`, { title: nul }, "title"],
      ["POST", `/api/v1/sites/${siteId}/media/import-url`, { url: "https://x.test/a.png", alt: nul }, "alt"],
      [
        "POST",
        "/api/v1/social/posts",
        { content: "c", platformOverrides: { x: nul }, accounts: ["a"] },
        "platformOverrides.x",
      ],
      ["POST", "/api/v1/social/posts", { content: "c", accounts: ["a", nul] }, "accounts.1"],
      ["POST", "/api/v1/social/accounts", { platform: "x", accountId: "1", accessToken: nul }, "accessToken"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await h.call(method, path, { key, body });
      const out = await expect400(res, field);
      expect(out.error.message).toContain("NUL");
    }
    // A key of an object is a field name too (it would land in a jsonb column).
    const keyed = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "c", platformOverrides: { "x\u0000": "y" }, accounts: ["a"] },
    });
    expect((await keyed.json()) as Json).toMatchObject({ error: { code: "VALIDATION_ERROR" } });
    expect(keyed.status).toBe(400);
  });

  test("a NUL in a query or path parameter answers 400 naming it", async () => {
    await expect400(await h.call("GET", "/api/v1/sites?cursor=%00", { key }), "cursor");
    await expect400(await h.call("GET", `/api/v1/sites/${siteId}/media?cursor=a%00b`, { key }), "cursor");
    await expect400(await h.call("GET", `/api/v1/sites/${siteId}/pages/ab%00cd`, { key }), "pageId");
  });

  test("a lone surrogate (not Unicode text) answers 400 naming the field", async () => {
    for (const bad of ["\\ud800", "x\\udfffy", "\\udc00\\ud800"]) {
      const res = await h.call("POST", "/api/v1/sites", { key, body: `{"name":"${bad}","slug":"sur"}` });
      const out = await expect400(res, "name");
      expect(out.error.message).toContain("Unicode");
    }
    // A well-formed pair (an emoji) is text and passes the edge.
    const ok = await h.call("POST", "/api/v1/sites", {
      key,
      body: `{"name":"\\ud83d\\ude00","slug":"emoji-${Date.now()}"}`,
    });
    expect(ok.status).toBe(201);
  });

  test("a NUL inside an MCP tool's arguments answers 400 before the protocol runs", async () => {
    const res = await h.call("POST", "/mcp", {
      key,
      headers: { accept: "application/json, text/event-stream" },
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "create_site", arguments: { name: "a\u0000", slug: "mcp-nul" } },
      },
    });
    await expect400(res, "params.arguments.name");
  });

  test("none of it logged an error (nothing reached the database)", () => {
    expect(lines.filter((l) => JSON.parse(l).level === "error")).toEqual([]);
  });
});

describe("the error logger prints no SQL at the default level", () => {
  test("a failing query is logged by its PostgreSQL code and message, without the statement or parameters", async () => {
    let failure: unknown;
    try {
      await h.db.execute(sql`select ${"secret-param-\u0000"}::text as leaked_column_name`);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeDefined();
    const out: string[] = [];
    const res = renderError(
      "UNKNOWN",
      failure,
      createLogger("info", {}, { sink: (l) => out.push(l) }),
      "req_test",
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("select");
    expect(out.length).toBe(1);
    const line = JSON.parse(out[0]!);
    expect(line.level).toBe("error");
    expect(out[0]).not.toMatch(/select|leaked_column_name|secret-param|Failed query/i);
    expect(JSON.stringify(line.cause)).toContain('"code":"22021"');
    expect(JSON.stringify(line.cause)).toContain("invalid byte sequence");
    // At debug level the statement (never its parameters) helps the operator find the query.
    const debug: string[] = [];
    renderError("UNKNOWN", failure, createLogger("debug", {}, { sink: (l) => debug.push(l) }), "req_test");
    expect(debug.join("\n")).toContain("leaked_column_name");
    expect(debug.join("\n")).not.toContain("secret-param");
  });
});
