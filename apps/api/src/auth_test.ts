import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

type Operation = { security?: Record<string, string[]>[]; requestBody?: unknown };
type OpenApi = { paths: Record<string, Record<string, Operation>> };

/** The routes anyone may call, by method and path as the app registers them (`:param`, `*`). */
const PUBLIC = new Set([
  // docs
  "GET /swagger",
  "GET /swagger/json",
  "GET /swagger/assets/standalone.js",
  // the OAuth callback of the platforms (the single-use state is the credential)
  "GET /api/v1/social/oauth/:platform/callback",
  // health
  "GET /healthz",
  "GET /readyz",
  // delivery (grants, share tokens, session cookies) and the signed PUT (its signature is the credential)
  "GET /api/media/*",
  "HEAD /api/media/*",
  "PUT /api/media/*",
  // the same routes as the OpenAPI document names them (the wildcard documented as one path parameter)
  "GET /api/media/:key",
  "HEAD /api/media/:key",
  "PUT /api/media/:key",
  // public reads
  "GET /api/v1/public/sites/:slug",
  "GET /api/v1/public/sites/:slug/collections/:key/items",
  "GET /api/v1/public/sites/:slug/pages",
  "GET /api/v1/public/sites/:slug/pages/:pageId",
  "GET /api/v1/public/screenshot-styles/:styleId/preview",
  // the newsletter's public doors (the signed link token is the credential; subscribe is rate-limited)
  "POST /api/v1/public/sites/:slug/subscribe",
  "GET /api/v1/public/newsletter/confirm",
  "GET /api/v1/public/newsletter/unsubscribe",
  "POST /api/v1/public/newsletter/unsubscribe",
  // Amazon SNS notifications of SES bounces (the message's signature, by a certificate of an allowed
  // host, is the credential; decision 1456)
  "POST /api/v1/newsletter/inbound/ses",
  // MCP discovery: OAuth protected-resource metadata (RFC 9728)
  "GET /.well-known/oauth-protected-resource",
  "GET /.well-known/oauth-protected-resource/mcp",
  // hosted sign-in pages (the one-time token in the path is the credential)
  "GET /screenshot-login/:token",
  "WS /screenshot-login/:token/ws",
]);

const ID = "00000000-0000-4000-8000-000000000000";
const appPath = (openApiPath: string) => openApiPath.replace(/\{(\w+)\}/g, ":$1");
const concrete = (openApiPath: string) => openApiPath.replace(/\{\w+\}/g, ID);

describe("auth is declared on every route that is not public", () => {
  test("every operation of the live OpenAPI document answers 401 without a key, unless listed public", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as OpenApi;
    let guarded = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${appPath(path)}`;
        if (PUBLIC.has(name)) {
          // OpenAPI's empty requirement: no credentials (redocly's security-defined rule).
          expect(op.security, `${name} is public and documented without a key`).toEqual([]);
          continue;
        }
        // A body that would fail validation: authentication must still answer first.
        const res = await h.call(method.toUpperCase(), concrete(path), {
          body: op.requestBody ? { unexpected: true } : undefined,
        });
        expect(res.status, `${name} without a key`).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
        // The inbound bounce route takes the operator's token, not an API key (its own scheme).
        const scheme = name === "POST /api/v1/newsletter/inbound" ? "operatorToken" : "bearerAuth";
        expect(op.security, `${name} documents the bearer requirement`).toEqual([{ [scheme]: [] }]);
        guarded++;
      }
    }
    expect(guarded).toBeGreaterThan(20);
  });

  test("a route missing from the document is one of the listed public routes", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as OpenApi;
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${appPath(path)}`),
      ),
    );
    const routes = (h.app.routes as { method: string; path: string }[])
      .filter((r) => r.method !== "OPTIONS")
      .map((r) => `${r.method} ${r.path}`);
    for (const route of routes) {
      if (!documented.has(route)) expect(PUBLIC.has(route), `${route} is undocumented`).toBe(true);
    }
  });

  test("each public route really answers without a key", async () => {
    const res = await h.call("GET", "/healthz");
    expect(res.status).toBe(200);
    const preview = await h.call("GET", "/api/v1/public/screenshot-styles/laptop-studio/preview");
    expect(preview.status).toBe(200);
    const page = await h.call("GET", `/api/v1/public/sites/no-such-site/pages`);
    expect(page.status).toBe(404);
  });
});
