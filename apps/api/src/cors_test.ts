import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, type TestApp } from "@site/api/testing";

// A browser app on another origin calls the API: its preflight is answered before authentication, and
// only the configured origins get CORS headers.
const APP = "https://app.example.test";
const DEV = "http://127.0.0.1:5173";
let h: TestApp;
let plain: TestApp;
let key: string;
let siteId: string;

beforeAll(async () => {
  h = await buildTestApp({ env: { CORS_ORIGINS: `${APP},${DEV}` } });
  plain = await buildTestApp();
  key = (await h.seedOrg()).key;
  siteId = (await h.newSite(key)).id;
});
afterAll(async () => {
  await h.close();
  await plain.close();
});

function preflight(app: TestApp, path: string, origin: string, method = "POST") {
  return app.app.handle(
    new Request(`http://localhost${path}`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": method,
        "access-control-request-headers": "authorization,content-type,if-match,idempotency-key",
      },
    }),
  );
}

describe("CORS for /api/v1 (CORS_ORIGINS)", () => {
  test("an allowed origin's preflight on an authenticated route: 204 with methods, headers and max-age, no key needed", async () => {
    for (const [path, method] of [
      [`/api/v1/sites/${siteId}/pages`, "POST"],
      [`/api/v1/sites/${siteId}/layout`, "PUT"],
      [`/api/v1/sites/${siteId}`, "PATCH"],
      [`/api/v1/sites/${siteId}/media/med_x`, "DELETE"],
      ["/api/v1/sites?limit=5", "GET"],
    ] as const) {
      const res = await preflight(h, path, APP, method);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(APP);
      expect(res.headers.get("access-control-allow-methods")).toContain(method);
      const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase();
      for (const name of ["authorization", "content-type", "if-match", "idempotency-key"])
        expect(allowed).toContain(name);
      expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
      expect(res.headers.get("vary")).toContain("Origin");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(await res.text()).toBe("");
    }
    // The second configured origin is answered with itself, never a list or "*".
    const dev = await preflight(h, "/api/v1/sites", DEV);
    expect(dev.headers.get("access-control-allow-origin")).toBe(DEV);
  });

  test("answers to an allowed origin carry Allow-Origin, Vary and the exposed headers, errors included", async () => {
    const ok = await h.call("GET", "/api/v1/sites?limit=5", { key, headers: { origin: APP } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
    expect(ok.headers.get("vary")).toContain("Origin");
    const exposed = ok.headers.get("access-control-expose-headers")!.toLowerCase();
    for (const name of ["etag", "retry-after", "idempotent-replayed", "x-request-id", "location"])
      expect(exposed).toContain(name);

    const layout = await h.call("GET", `/api/v1/sites/${siteId}/layout`, { key, headers: { origin: APP } });
    expect(layout.status).toBe(200);
    expect(layout.headers.get("etag")).toMatch(/^(W\/)?"[^"]+"$/);
    expect(layout.headers.get("access-control-allow-origin")).toBe(APP);

    // The page must be able to read why it was refused.
    const noKey = await h.call("GET", "/api/v1/sites", { headers: { origin: APP } });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get("access-control-allow-origin")).toBe(APP);
    expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
    const missing = await h.call("GET", "/api/v1/nothing-here", { key, headers: { origin: APP } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(APP);
  });

  test("other origins, and paths outside /api/v1, get no CORS headers", async () => {
    const evil = "https://evil.example.test";
    const pre = await preflight(h, "/api/v1/sites", evil);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-methods")).toBeNull();
    const get = await h.call("GET", "/api/v1/sites", { key, headers: { origin: evil } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
    expect(get.headers.get("access-control-expose-headers")).toBeNull();
    // A look-alike origin (another port, a suffix) is another origin.
    for (const o of [`${APP}:8443`, "https://app.example.test.evil.test", "http://app.example.test"]) {
      const r = await h.call("GET", "/api/v1/sites", { key, headers: { origin: o } });
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
    }
    const health = await h.call("GET", "/healthz", { headers: { origin: APP } });
    expect(health.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("with CORS_ORIGINS unset (the default) no origin gets CORS headers", async () => {
    const pkey = (await plain.seedOrg()).key;
    const pre = await preflight(plain, "/api/v1/sites", APP);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const get = await plain.call("GET", "/api/v1/sites", { key: pkey, headers: { origin: APP } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("CORS_ORIGINS is checked at start: a path or a bare host is refused with the setting's name", async () => {
    const { loadConfig, ConfigError } = await import("@site/config");
    for (const bad of ["https://app.example.test/path", "app.example.test", "ftp://x.test"])
      expect(() => loadConfig({ SECRET_KEY: "x".repeat(20), CORS_ORIGINS: bad })).toThrow(ConfigError);
    expect(loadConfig({ SECRET_KEY: "x".repeat(20), CORS_ORIGINS: `${APP}/, ${DEV}` }).corsOrigins).toEqual([
      APP,
      DEV,
    ]);
  });
});
