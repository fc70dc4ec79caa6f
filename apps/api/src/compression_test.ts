import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../testing/mod.ts";
import { acceptsGzip, COMPRESS_MIN_BYTES } from "./compression.ts";

type Json = any;

describe("Accept-Encoding", () => {
  test("gzip is accepted when named without q=0, in any case and among others", () => {
    expect(acceptsGzip("gzip")).toBe(true);
    expect(acceptsGzip("br, GZIP;q=0.5, deflate")).toBe(true);
    expect(acceptsGzip("x-gzip")).toBe(true);
    expect(acceptsGzip("gzip;q=0")).toBe(false);
    expect(acceptsGzip("gzip; q=0.0")).toBe(false);
    expect(acceptsGzip("br, deflate")).toBe(false);
    expect(acceptsGzip("identity")).toBe(false);
    expect(acceptsGzip("")).toBe(false);
    expect(acceptsGzip(null)).toBe(false);
  });
});

// Decision 0811: the API process (`bun run apps/api`) gzips JSON answers of 8 KiB or more for clients
// that accept it; smaller answers, other types and clients that do not ask go out as they are.
describe("a running API compresses large JSON answers", () => {
  let h: TestApp;
  let api: ApiProcess;
  let key: string;
  let siteId: string;
  beforeAll(async () => {
    h = await buildTestApp();
    const o = await h.seedOrg();
    key = o.key;
    siteId = (await h.newSite(key)).id;
    await h.db.execute(sql`
      insert into media_files (site_id, key, name, content_type, size, source, created_at)
      select ${siteId}::uuid, 'site-media/' || ${siteId} || '/file-' || i || '.png', 'file-' || i || '.png',
        'image/png', 100 + i, 'upload', now() - (i || ' seconds')::interval
      from generate_series(1, 60) i`);
    api = await spawnApi({ DATABASE_URL: h.databaseUrl, LOG_LEVEL: "error" });
  }, 60_000);
  afterAll(async () => {
    await api?.kill();
    await h.close();
  });

  const get = (path: string, acceptEncoding: string) =>
    fetch(`${api.url}${path}`, {
      headers: { authorization: `Bearer ${key}`, "accept-encoding": acceptEncoding },
      decompress: false,
    } as RequestInit);

  test("a 50-file page is gzipped for a client that accepts gzip, and decodes to the same answer", async () => {
    const path = `/api/v1/sites/${siteId}/media?limit=50`;
    const plain = await get(path, "identity");
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-encoding")).toBeNull();
    const text = await plain.text();
    expect(text.length).toBeGreaterThan(COMPRESS_MIN_BYTES);

    const zipped = await get(path, "gzip, deflate, br");
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toContain("Accept-Encoding");
    expect(zipped.headers.get("content-type")).toContain("application/json");
    // the headers the app set survive the rewrite
    expect(zipped.headers.get("x-request-id")).toMatch(/^req_/);
    const bytes = new Uint8Array(await zipped.arrayBuffer());
    expect(bytes.byteLength).toBeLessThan(text.length / 3);
    const decoded = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(bytes))) as Json;
    expect(decoded).toEqual(JSON.parse(text));
    expect(decoded.images).toHaveLength(50);
  });

  test("small answers, errors and clients that refuse gzip get the bytes as they are", async () => {
    const small = await get(`/api/v1/sites/${siteId}/media?limit=2`, "gzip");
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(((await small.json()) as Json).images).toHaveLength(2);
    const refused = await get(`/api/v1/sites/${siteId}/media?limit=50`, "gzip;q=0, br");
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(((await refused.json()) as Json).images).toHaveLength(50);
    const missing = await get("/api/v1/sites/00000000-0000-4000-8000-000000000000/media", "gzip");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-encoding")).toBeNull();
    expect(((await missing.json()) as Json).error.code).toBe("NOT_FOUND");
  });

  test("the OpenAPI document (large JSON) is gzipped too; a plain fetch decodes it", async () => {
    const doc = await get("/swagger/json", "gzip");
    expect(doc.status).toBe(200);
    expect(doc.headers.get("content-encoding")).toBe("gzip");
    const viaFetch = await fetch(`${api.url}/swagger/json`);
    expect(((await viaFetch.json()) as Json).openapi).toMatch(/^3\./);
  });
});
