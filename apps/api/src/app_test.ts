import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

describe("every answer keeps the contract", () => {
  test("unknown routes are 404 NOT_FOUND in the error body", async () => {
    const res = await h.call("GET", "/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "NOT_FOUND", message: "no such route" } });
  });

  test("a body that is not JSON is 400 VALIDATION_ERROR, never a 500", async () => {
    const { key } = await h.seedOrg();
    const res = await h.call("POST", "/api/v1/sites", {
      key,
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("VALIDATION_ERROR");
  });

  test("a body of the wrong shape names the field", async () => {
    const { key } = await h.seedOrg();
    const res = await h.call("POST", "/api/v1/sites", { key, body: { name: ["x"], slug: "ok-slug" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe("VALIDATION_ERROR");
    expect(body.error.details.map((d: any) => d.field)).toContain("name");
  });

  test("authentication comes before validation: no key and a bad body is 401", async () => {
    const res = await h.call("POST", "/api/v1/sites", { body: { nonsense: true } });
    expect(res.status).toBe(401);
  });

  test("every 401 carries WWW-Authenticate: Bearer (invalid_token when a key was refused)", async () => {
    const none = await h.call("GET", "/api/v1/sites");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="site-content-api"');
    const bad = await h.call("GET", "/api/v1/sites", { key: "sk_not_a_key" });
    expect(bad.headers.get("www-authenticate")).toMatch(
      /^Bearer realm="site-content-api", error="invalid_token"/,
    );
    const mcp = await h.call("POST", "/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toStartWith("Bearer");
  });

  test("a revoked key is 401", async () => {
    const org = await h.seedOrg();
    const { revokeApiKey } = await import("@site/domain/core");
    expect((await h.call("GET", "/api/v1/sites", { key: org.key })).status).toBe(200);
    await revokeApiKey(h.ctx, org.keyId);
    const res = await h.call("GET", "/api/v1/sites", { key: org.key });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe("UNAUTHORIZED");
  });

  test("every answer carries an x-request-id; a caller's well-formed id is echoed", async () => {
    const res = await h.call("GET", "/healthz");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const echoed = await h.call("GET", "/nope", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const hostile = await h.call("GET", "/healthz", { headers: { "x-request-id": "<script>" } });
    expect(hostile.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("GET /healthz answers 200 when the database is reachable", async () => {
    const res = await h.call("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("error answers carry no stack traces, SQL or server paths", async () => {
    const { key } = await h.seedOrg();
    const answers = await Promise.all([
      h.call("POST", "/api/v1/sites", { key, body: "{" }),
      h.call("GET", "/api/v1/sites?cursor=%00%01", { key }),
      h.call("GET", "/api/v1/sites/'; drop table sites;--/pages", { key }),
    ]);
    for (const res of answers) {
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(text).not.toMatch(/at \w+ \(|\/work\/|node_modules|select |insert into/i);
    }
  });
});
