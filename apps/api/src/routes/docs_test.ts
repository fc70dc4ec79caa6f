import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import puppeteer from "puppeteer-core";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

type Operation = {
  responses: Record<string, { description?: string; content?: Record<string, unknown>; headers?: any }>;
  requestBody?: { content: Record<string, unknown> };
  parameters?: { name: string; in: string; schema: unknown }[];
  security?: unknown[];
  "x-error-codes"?: string[];
};
type OpenApi = { openapi: string; paths: Record<string, Record<string, Operation>> };

async function liveDocument(): Promise<OpenApi> {
  const res = await h.call("GET", "/swagger/json");
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApi;
}

function operations(doc: OpenApi): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(
      ([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation],
    ),
  );
}

/** Every schema object below `value`, depth first. */
function* schemas(value: unknown): Generator<Record<string, any>> {
  if (Array.isArray(value)) for (const v of value) yield* schemas(v);
  else if (value && typeof value === "object") {
    yield value as Record<string, any>;
    for (const v of Object.values(value)) yield* schemas(v);
  }
}

describe("OpenAPI document", () => {
  test("a real validator (@apidevtools/swagger-parser) accepts it as OpenAPI 3.1", async () => {
    const doc = await liveDocument();
    expect(doc.openapi).toMatch(/^3\.1\./);
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  test("documents every API route, the delivery route and the signed-upload PUT included", async () => {
    const doc = await liveDocument();
    const routes = (h.app.routes as { method: string; path: string }[]).filter(
      (r) => (r.path.startsWith("/api/") || r.path === "/mcp") && !["OPTIONS", "WS"].includes(r.method),
    );
    expect(routes.length).toBeGreaterThan(5);
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{key}");
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path} is documented`).toBeDefined();
      const statuses = Object.keys(op!.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        `${r.method} ${r.path} has a success response`,
      ).toBe(true);
      // Public: the published-site reads, the platforms' OAuth callback (its single-use state is the
      // credential) and Amazon SNS's notifications (their signature is; decision 1456).
      const isPublic =
        path.startsWith("/api/v1/public/") ||
        path.startsWith("/api/v1/social/oauth/") ||
        path === "/api/v1/newsletter/inbound/ses";
      if (path.startsWith("/api/v1/") && !isPublic) {
        expect(statuses, `${r.method} ${r.path} documents 401`).toContain("401");
        expect(op!.security, `${r.method} ${r.path} names its security`).toBeDefined();
      }
    }
    for (const method of ["get", "head", "put"]) {
      const op = doc.paths["/api/media/{key}"]?.[method];
      expect(op, `${method} /api/media/{key}`).toBeDefined();
      expect(op!.parameters!.find((p) => p.name === "key")?.in).toBe("path");
    }
    const get = doc.paths["/api/media/{key}"]!.get!;
    expect(get.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(["k", "t", "Range"]));
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(["200", "206", "304", "403", "404"]));
    const put = doc.paths["/api/media/{key}"]!.put!;
    expect(Object.keys(put.requestBody!.content)).toContain("image/png");
    expect(put.parameters!.map((p) => p.name)).toContain("X-Signature");
  });

  test("the social publishing routes document their errors", async () => {
    const doc = await liveDocument();
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(statuses("/api/v1/social/media", "get")).toEqual(["200", "400", "401", "403"]);
    // Every authenticated POST also answers 409 CONFLICT for a reused Idempotency-Key (decision 0832).
    expect(statuses("/api/v1/social/media", "post")).toEqual(["201", "400", "401", "403", "409"]);
    expect(statuses("/api/v1/social/media/upload", "post")).toEqual(["201", "400", "401", "403", "409"]);
    expect(statuses("/api/v1/social/media/{mediaId}", "delete")).toEqual([
      "204",
      "401",
      "403",
      "404",
      "409",
      "503",
    ]);
    const removal = doc.paths["/api/v1/social/media/{mediaId}"]!.delete!;
    expect((removal.responses["409"] as any)["x-error-codes"]).toEqual(["CONFLICT"]);
    expect(statuses("/api/v1/social/media/generate", "post")).toEqual([
      "201",
      "400",
      "401",
      "402",
      "403",
      "409",
      "501",
      "502",
    ]);
    expect(statuses("/api/v1/social/accounts/connect", "post")).toEqual([
      "201",
      "400",
      "401",
      "403",
      "409",
      "501",
    ]);
    expect(statuses("/api/v1/social/accounts/{accountId}", "delete")).toEqual(["204", "401", "403", "404"]);
    expect(statuses("/api/v1/social/oauth/{platform}/callback", "get")).toEqual([
      "200",
      "302",
      "400",
      "404",
      "503",
    ]);
    // Public: OpenAPI's empty requirement (redocly's security-defined rule).
    expect(doc.paths["/api/v1/social/oauth/{platform}/callback"]?.get?.security).toEqual([]);
  });

  test("one response content type, a description on every response, numbers as numbers", async () => {
    const doc = await liveDocument();
    for (const [name, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${name} ${status} has a description`).toBeTruthy();
        const types = Object.keys(response.content ?? {});
        expect(types.length, `${name} ${status}: ${types.join(", ")}`).toBeLessThanOrEqual(1);
        if (status >= "400") expect(types, `${name} ${status} is JSON`).not.toContain("text/plain");
      }
      const body = Object.keys(op.requestBody?.content ?? {});
      expect(
        body.filter((t) => t === "multipart/form-data" || t === "text/plain"),
        name,
      ).toEqual([]);
    }
    for (const s of schemas(doc.paths)) {
      if (!Array.isArray(s.anyOf)) continue;
      const coercible = s.anyOf.filter(
        (x: any) => x?.type === "string" && (/integer|numeric/.test(x.format) || x.pattern === "^[0-9]*$"),
      );
      expect(coercible, `no anyOf string|number left: ${JSON.stringify(s).slice(0, 200)}`).toEqual([]);
    }
    const limit = doc.paths["/api/v1/sites"]!.get!.parameters!.find((p) => p.name === "limit")!;
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    const featured = doc.paths["/api/v1/sites/{siteId}/media/screenshot-styles"]!.get!.parameters!.find(
      (p) => p.name === "featured",
    )!;
    expect(featured.schema).toMatchObject({ type: "boolean" });
    const upload = doc.paths["/api/v1/sites/{siteId}/media/upload"]!.post!;
    const size = (upload.requestBody!.content["application/json"] as any).schema.properties.size;
    expect(size).toMatchObject({ type: "integer", minimum: 1, maximum: 10485760 });
  });

  test("each response names the error codes it can carry; 401 says WWW-Authenticate", async () => {
    const doc = await liveDocument();
    const create = doc.paths["/api/v1/sites"]!.post!;
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "404", "409", "410", "422", "500"]),
    );
    const codes = (status: string) => (create.responses[status] as any)["x-error-codes"];
    expect(codes("400")).toEqual(
      expect.arrayContaining(["VALIDATION_ERROR", "INVALID_SLUG", "RESERVED_SLUG"]),
    );
    expect(codes("403")).toEqual(expect.arrayContaining(["FORBIDDEN", "LIMIT_EXCEEDED"]));
    expect(codes("409")).toEqual(["SLUG_TAKEN", "CONFLICT"]);
    const enumOf = (status: string) =>
      (create.responses[status]!.content!["application/json"] as any).schema.properties.error.properties.code
        .enum;
    expect(enumOf("404")).toEqual(["TEMPLATE_NOT_FOUND"]);
    expect(create["x-error-codes"]).toEqual(expect.arrayContaining(["SLUG_TAKEN", "UNAUTHORIZED"]));
    const imp = doc.paths["/api/v1/sites/{siteId}/media/import-url"]!.post!;
    expect((imp.responses["400"] as any)["x-error-codes"]).toEqual(
      expect.arrayContaining(["VALIDATION_ERROR", "BLOCKED_HOST"]),
    );
    for (const [name, op] of operations(doc)) {
      if (!op.security?.length) continue;
      expect(op.responses["401"]?.headers?.["WWW-Authenticate"], `${name}: WWW-Authenticate`).toBeDefined();
      for (const [status, response] of Object.entries(op.responses))
        if (status >= "400" && (response.content?.["application/json"] as any)?.schema?.properties?.error)
          expect(
            (response as any)["x-error-codes"]?.length,
            `${name} ${status} lists its codes`,
          ).toBeGreaterThan(0);
    }
  });
});

const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

describe.skipIf(!chromium)("Swagger UI", () => {
  test("renders in headless Chromium with no internet (script served from the package)", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => h.app.handle(req) });
    const profile = mkdtempSync(join(tmpdir(), "chrome-"));
    const browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
      ],
    });
    try {
      const page = await browser.newPage();
      const offsite: string[] = [];
      await page.setRequestInterception(true);
      page.on("request", (req) => {
        const url = new URL(req.url());
        if (url.protocol.startsWith("http") && url.hostname !== "127.0.0.1") {
          offsite.push(req.url());
          void req.abort();
        } else void req.continue();
      });
      await page.goto(`http://127.0.0.1:${server.port}/swagger`, { waitUntil: "load" });
      // innerText on purpose: only text the UI actually rendered counts.
      // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point
      await page.waitForFunction(() => document.body.innerText.includes("Create a site"), {
        timeout: 20_000,
      });
      // The configuration reaches the page as written (escaped once, read back by the HTML parser).
      const config = await page.evaluate(
        () => document.getElementById("api-reference")?.dataset.configuration,
      );
      expect(JSON.parse(config ?? "null")).toMatchObject({
        hideClientButton: true,
        agent: { disabled: true },
        mcp: { disabled: true },
        authentication: { preferredSecurityScheme: "bearerAuth" },
      });
      // The delivery group opens from its link, as a reader would: both wildcard routes are listed.
      await page.setViewport({ width: 1400, height: 900 });
      await page.goto(`http://127.0.0.1:${server.port}/swagger#tag/delivery`, { waitUntil: "load" });
      await page.waitForFunction(
        // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point
        () => document.body.innerText.includes("Receive the bytes of a signed upload"),
        { timeout: 20_000 },
      );
      // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toContain("Site Content API");
      expect(text).toContain("Deliver a media file");
      expect(offsite.filter((u) => u.includes("standalone") || u.endsWith(".js"))).toEqual([]);
    } finally {
      await browser.close();
      server.stop(true);
      rmSync(profile, { recursive: true, force: true });
    }
  }, 60_000);
});
