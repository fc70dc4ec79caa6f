import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { listStyles } from "@site/domain/screenshots";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { PREVIEW_DIR } from "./screenshot_styles.ts";

let h: TestApp;
let key: string;
let siteId: string;
const BASE = "https://api.example.test";

beforeAll(async () => {
  h = await buildTestApp({ env: { PUBLIC_BASE_URL: BASE } });
  const org = await h.seedOrg();
  key = org.key;
  const res = await h.call("POST", "/api/v1/sites", { key, body: { name: "Styles", slug: "styles-site" } });
  siteId = ((await res.json()) as any).site.id;
});
afterAll(() => h.close());

const path = (q = "") => `/api/v1/sites/${siteId}/media/screenshot-styles${q}`;

describe("GET /api/v1/sites/:siteId/media/screenshot-styles", () => {
  test("keeps the auth rules (content:write)", async () => {
    await expectAuthRules(h, { method: "GET", path: path(), scope: "content:write" });
  });

  test("lists at least 10 styles with the spec's fields and absolute preview URLs", async () => {
    const res = await h.call("GET", path(), { key });
    expect(res.status).toBe(200);
    const { styles } = (await res.json()) as { styles: any[] };
    expect(styles.length).toBeGreaterThanOrEqual(10);
    expect(new Set(styles.map((s) => s.id)).size).toBe(styles.length);
    for (const s of styles) {
      expect(Object.keys(s).sort()).toEqual(
        ["author", "description", "featured", "id", "name", "previewImageUrl", "previewSourceHost"].sort(),
      );
      expect(s.previewImageUrl).toBe(`${BASE}/api/v1/public/screenshot-styles/${s.id}/preview`);
      expect(s.previewSourceHost).toBe("lumen.example");
    }
  });

  test("featured=1 narrows to the curated gallery (at least 4)", async () => {
    const { styles } = (await (await h.call("GET", path("?featured=1"), { key })).json()) as {
      styles: any[];
    };
    expect(styles.length).toBeGreaterThanOrEqual(4);
    expect(styles.every((s) => s.featured)).toBe(true);
    const all = (await (await h.call("GET", path("?featured=0"), { key })).json()) as { styles: any[] };
    expect(all.styles.length).toBeGreaterThan(styles.length);
  });

  test("limit caps the list; bad limit or featured is 400 VALIDATION_ERROR with the field", async () => {
    const { styles } = (await (await h.call("GET", path("?limit=3"), { key })).json()) as { styles: any[] };
    expect(styles.map((s) => s.id)).toEqual(listStyles({ limit: 3 }).map((s) => s.id));
    for (const q of ["?limit=0", "?limit=101", "?limit=abc", "?featured=yes"]) {
      const res = await h.call("GET", path(q), { key });
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.details[0].field).toBe(q.includes("limit") ? "limit" : "featured");
    }
  });

  test("a site of another organization (or no site) is 404 NOT_FOUND", async () => {
    const other = await h.seedOrg();
    const res = await h.call("GET", path(), { key: other.key });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
    const missing = await h.call(
      "GET",
      "/api/v1/sites/00000000-0000-4000-8000-000000000000/media/screenshot-styles",
      {
        key,
      },
    );
    expect(missing.status).toBe(404);
  });
});

describe("GET /api/v1/public/screenshot-styles/:id/preview", () => {
  test("every listed style's preview is served publicly as a cacheable WebP", async () => {
    for (const style of listStyles({ limit: 100 })) {
      const res = await h.call("GET", `/api/v1/public/screenshot-styles/${style.id}/preview`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/webp");
      expect(res.headers.get("cache-control")).toContain("public");
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(new TextDecoder().decode(bytes.slice(8, 12))).toBe("WEBP");
    }
  });

  test("an unknown style's preview is 404 NOT_FOUND, never another image", async () => {
    for (const id of ["nope", "..%2F..%2Fpackage.json"]) {
      const res = await h.call("GET", `/api/v1/public/screenshot-styles/${id}/preview`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
    }
  });

  test("the committed previews stay small (< 150 KB each) and cover the catalog exactly", () => {
    const files = readdirSync(PREVIEW_DIR).filter((f) => f.endsWith(".webp"));
    expect(files.sort()).toEqual(
      listStyles({ limit: 100 })
        .map((s) => `${s.id}.webp`)
        .sort(),
    );
    for (const f of files) expect(statSync(join(PREVIEW_DIR, f)).size).toBeLessThan(150 * 1024);
  });
});
