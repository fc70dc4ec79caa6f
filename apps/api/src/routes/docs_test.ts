import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";
import { buildTestApp, type TestApp } from "../testing.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

type OpenApi = {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
};

describe("OpenAPI document", () => {
  test("documents every API route with its success and error responses", async () => {
    const res = await h.call("GET", "/swagger/json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApi;
    const routes = (h.app.routes as { method: string; path: string }[]).filter(
      (r) => r.path.startsWith("/api/") && r.method !== "OPTIONS",
    );
    expect(routes.length).toBeGreaterThan(5);
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{*}");
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      if (!op && r.path.includes("*")) continue; // wildcard routes are documented by their own files
      expect(op, `${r.method} ${r.path} is documented`).toBeDefined();
      const statuses = Object.keys(op!.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        `${r.method} ${r.path} has a success response`,
      ).toBe(true);
      if (path.startsWith("/api/v1/") && !path.startsWith("/api/v1/public/")) {
        expect(statuses, `${r.method} ${r.path} documents 401`).toContain("401");
      }
    }
    const create = doc.paths["/api/v1/sites"]!.post!;
    expect(create.requestBody).toBeDefined();
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403", "404", "409", "410", "422", "500"]),
    );
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
      // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toContain("Site Content API");
      expect(offsite.filter((u) => u.includes("standalone") || u.endsWith(".js"))).toEqual([]);
    } finally {
      await browser.close();
      server.stop(true);
      rmSync(profile, { recursive: true, force: true });
    }
  }, 60_000);
});
