import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mediaFiles, organizations } from "@site/db";
import { createUserSession } from "@site/domain/core";
import { mintGrant, shareMedia } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { type ObjectStore, openFsStore, openS3Store } from "@site/storage";
import { startTestS3 } from "@site/storage/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

type Driver = {
  name: "fs" | "s3";
  open(): Promise<{
    store: ObjectStore;
    env: Record<string, string>;
    clock: { ms: number };
    stop(): Promise<void>;
  }>;
};

const drivers: Driver[] = [
  {
    name: "fs",
    open: async () => {
      const root = mkdtempSync(join(tmpdir(), "media-test-"));
      const clock = { ms: 0 };
      const store = openFsStore({
        root,
        publicBaseUrl: "http://127.0.0.1:3000",
        secretKey: "fs-store-test-secret-0123456789",
        maxPutBytes: 10485760,
        now: () => new Date(Date.now() + clock.ms),
      });
      return { store, env: {}, clock, stop: async () => rmSync(root, { recursive: true, force: true }) };
    },
  },
  {
    name: "s3",
    open: async () => {
      const s3 = await startTestS3();
      const store = openS3Store(s3.options);
      const env = {
        S3_BUCKET: s3.options.bucket,
        S3_ENDPOINT: s3.options.endpoint!,
        S3_FORCE_PATH_STYLE: "1",
        S3_ACCESS_KEY_ID: "S3RVER",
        S3_SECRET_ACCESS_KEY: "S3RVER",
      };
      return {
        store,
        env,
        clock: { ms: 0 },
        stop: async () => {
          await store.close();
          await s3.stop();
        },
      };
    },
  },
];

describe.each(drivers)("media library on the $name driver", (driver) => {
  let h: TestApp;
  let d: Awaited<ReturnType<Driver["open"]>>;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  let base: string;

  beforeAll(async () => {
    d = await driver.open();
    h = await buildTestApp({ store: d.store, env: { ...d.env, MEDIA_DAILY_UPLOAD_LIMIT: "3" } });
    owner = await h.seedOrg({ siteLimit: 100 });
    h.app.listen({ hostname: "127.0.0.1", port: 0, maxRequestBodySize: 12 * 1024 * 1024 });
    base = `http://127.0.0.1:${h.app.server!.port}`;
  });
  afterAll(async () => {
    await h.app.stop(true);
    await h.close();
    await d.stop();
  });

  const newSite = async (key = owner.key) => {
    const res = await h.call("POST", "/api/v1/sites", { key, body: { name: "S", slug: `s-${uniq()}` } });
    return ((await res.json()) as Json).site.id as string;
  };
  const prepare = async (siteId: string, body: unknown, key = owner.key) => {
    const res = await h.call("POST", `/api/v1/sites/${siteId}/media/upload`, { key, body });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /**
   * PUTs bytes to upload.url over real HTTP: the API's own route (fs), which lands them itself, or the
   * S3 server, after which the client calls …/upload/<name>/complete as the documented flow says.
   */
  const putBytes = async (
    upload: Json,
    bytes: Uint8Array,
    headers: Record<string, string> = upload.headers,
    key = owner.key,
  ) => {
    const url = driver.name === "fs" ? upload.url.replace(/^https?:\/\/[^/]+/, base) : upload.url;
    const res = await fetch(url, {
      method: "PUT",
      headers,
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    });
    if (driver.name === "s3" && res.ok) {
      const m = /^site-media\/([^/]+)\/([^/?]+)/.exec(
        decodeURIComponent(new URL(url).pathname.replace(/^\/[^/]+\//, "")),
      );
      if (m) await h.call("POST", `/api/v1/sites/${m[1]}/media/upload/${m[2]}/complete`, { key });
    }
    return res;
  };
  const list = async (siteId: string, query = "", key = owner.key) => {
    const res = await h.call("GET", `/api/v1/sites/${siteId}/media${query}`, { key });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const upload = async (siteId: string, bytes: Uint8Array, contentType = "image/png") => {
    const p = await prepare(siteId, { contentType, size: bytes.length });
    expect(p.status).toBe(201);
    const put = await putBytes(p.body.upload, bytes);
    expect(put.status).toBe(200);
    return p.body;
  };

  test("the routes keep the auth rules", async () => {
    const siteId = await newSite();
    await expectAuthRules(h, { method: "GET", path: `/api/v1/sites/${siteId}/media`, scope: "content:read" });
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${siteId}/media/upload`,
      scope: "content:write",
      body: { contentType: "image/png", size: 10 },
    });
    const other = await h.seedOrg();
    expect((await h.call("GET", `/api/v1/sites/${siteId}/media`, { key: other.key })).status).toBe(404);
  });

  test("upload preparation answers 201 with exactly the spec's result", async () => {
    const siteId = await newSite();
    const { status, body } = await prepare(siteId, { contentType: "image/webp", size: 1234 });
    expect(status).toBe(201);
    expect(Object.keys(body).sort()).toEqual([
      "maxBytes",
      "mediaType",
      "name",
      "path",
      "publicUrl",
      "upload",
    ]);
    expect(Object.keys(body.upload).sort()).toEqual(["expiresInSeconds", "headers", "method", "url"]);
    expect(body.upload).toMatchObject({
      method: "PUT",
      expiresInSeconds: 7200,
      headers: { "Content-Type": "image/webp" },
    });
    expect(body).toMatchObject({ mediaType: "image", maxBytes: 10485760 });
    expect(body.name).toMatch(/^[a-z0-9-]+\.webp$/);
    expect(body.path).toBe(`site-media/${siteId}/${body.name}`);
    expect(body.publicUrl).toBe(`/api/media/${body.path}`);
    const again = await prepare(siteId, { contentType: "image/webp", size: 1234 });
    expect(again.body.name).not.toBe(body.name);
  });

  test("SVG, other types and sizes over 10485760 are refused at preparation", async () => {
    const siteId = await newSite();
    for (const body of [
      { contentType: "image/svg+xml", size: 100 },
      { contentType: "text/html", size: 100 },
      { contentType: "image/png", size: 10485761 },
      { contentType: "image/png", size: 0 },
      { contentType: "image/png", size: 1.5 },
      { size: 100 },
    ]) {
      const r = await prepare(siteId, body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("a file is listed only once its bytes landed and passed the check; it then delivers", async () => {
    const siteId = await newSite();
    const png = sampleImage("png", { width: 40, height: 30, size: 3000 });
    const p = await prepare(siteId, { contentType: "image/png", size: png.length });
    expect((await list(siteId)).body.images).toEqual([]);
    expect((await putBytes(p.body.upload, png)).status).toBe(200);
    const { status, body } = await list(siteId);
    expect(status).toBe(200);
    expect(body.nextCursor).toBeNull();
    expect(body.images).toHaveLength(1);
    const img = body.images[0];
    expect(Object.keys(img).sort()).toEqual(["createdAt", "displayUrl", "id", "name", "size", "url"]);
    expect(img).toMatchObject({ name: p.body.name, url: p.body.publicUrl, size: 3000 });
    expect(img.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(img.displayUrl).toStartWith(`${p.body.publicUrl}?k=m.`);
    const [row] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.key, p.body.path));
    expect(row).toMatchObject({ width: 40, height: 30, contentType: "image/png", source: "upload" });
    const res = await fetch(`${base}${img.displayUrl}`);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
  });

  test("bytes that are not the declared image (SVG) are deleted and never listed or served", async () => {
    const siteId = await newSite();
    const svg = sampleImage("svg", { size: 500 });
    const p = await prepare(siteId, { contentType: "image/png", size: svg.length });
    const put = await putBytes(p.body.upload, svg);
    if (driver.name === "fs") {
      expect(put.status).toBe(400);
      expect(((await put.json()) as Json).error.code).toBe("VALIDATION_ERROR");
    }
    expect((await list(siteId)).body.images).toEqual([]);
    expect(await d.store.head(p.body.path)).toBeNull();
    const k = mintGrant(h.ctx, { kind: "member", siteId, key: p.body.path });
    expect((await fetch(`${base}${p.body.publicUrl}?k=${k}`)).status).toBe(404);
  });

  test("the daily upload cap (rolling 24 h) answers 429 RATE_LIMITED at preparation", async () => {
    const siteId = await newSite();
    for (let i = 0; i < 3; i++)
      expect((await prepare(siteId, { contentType: "image/png", size: 10 })).status).toBe(201);
    const over = await prepare(siteId, { contentType: "image/png", size: 10 });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("RATE_LIMITED");
  });

  test("the storage quota answers 403 FORBIDDEN, and concurrent preparations never overbook it", async () => {
    const org = await h.seedOrg({ storageQuotaBytes: 3000, siteLimit: 5 });
    const siteId = await newSite(org.key);
    const big = await prepare(siteId, { contentType: "image/png", size: 3001 }, org.key);
    expect(big.status).toBe(403);
    expect(big.body.error.code).toBe("FORBIDDEN");
    const siteB = await newSite(org.key);
    const results = await Promise.all(
      [siteId, siteId, siteB, siteB, siteB].map((s) =>
        prepare(s, { contentType: "image/png", size: 1000 }, org.key),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403)).toHaveLength(2);
  });

  test("landing counts the bytes against the organization's storage", async () => {
    const org = await h.seedOrg({ storageQuotaBytes: 100000 });
    const siteId = await newSite(org.key);
    const prepared = await prepare(siteId, { contentType: "image/gif", size: 700 }, org.key);
    const gif = sampleImage("gif", { size: 700 });
    expect((await putBytes(prepared.body.upload, gif, undefined, org.key)).status).toBe(200);
    const [row] = await h.db
      .select({ used: organizations.storageUsedBytes })
      .from(organizations)
      .where(eq(organizations.id, org.org.id));
    expect(row!.used).toBe(700);
  });

  test("the list pages newest first with an opaque cursor, limit default 50 and max 100", async () => {
    const siteId = await newSite();
    for (let i = 0; i < 3; i++)
      await h.db.insert(mediaFiles).values({
        siteId,
        key: `site-media/${siteId}/f${i}.png`,
        name: `f${i}.png`,
        contentType: "image/png",
        size: i + 1,
        source: "upload",
        createdAt: new Date(Date.now() - (10 - i) * 1000),
      });
    const first = await list(siteId, "?limit=2");
    expect(first.body.images.map((i: Json) => i.name)).toEqual(["f2.png", "f1.png"]);
    await h.db.insert(mediaFiles).values({
      siteId,
      key: `site-media/${siteId}/new.png`,
      name: "new.png",
      contentType: "image/png",
      size: 1,
      source: "upload",
    });
    const second = await list(siteId, `?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.images.map((i: Json) => i.name)).toEqual(["f0.png"]);
    expect(second.body.nextCursor).toBeNull();
    for (const q of ["?limit=0", "?limit=101", "?limit=x", "?cursor=bogus"]) {
      const r = await list(siteId, q);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("delivery streams with Range, ETag, Content-Length, the stored type and nosniff (GET and HEAD)", async () => {
    const siteId = await newSite();
    const jpeg = sampleImage("jpeg", { size: 5000 });
    const p = await upload(siteId, jpeg, "image/jpeg");
    const url = `${base}${p.publicUrl}?k=${mintGrant(h.ctx, { kind: "member", siteId, key: p.path })}`;
    const full = await fetch(url);
    expect(full.status).toBe(200);
    expect(full.headers.get("content-type")).toBe("image/jpeg");
    expect(full.headers.get("content-length")).toBe("5000");
    expect(full.headers.get("x-content-type-options")).toBe("nosniff");
    expect(full.headers.get("cache-control")).toStartWith("private");
    const etag = full.headers.get("etag")!;
    expect(etag).toMatch(/^".+"$/);
    await full.arrayBuffer();
    const part = await fetch(url, { headers: { range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 100-199/5000");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(jpeg.slice(100, 200));
    const tail = await fetch(url, { headers: { range: "bytes=-10" } });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(jpeg.slice(4990));
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("5000");
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const cached = await fetch(url, { headers: { "if-none-match": etag } });
    expect(cached.status).toBe(304);
  });

  test("every credential of the delivery table, and denial as 403 or 404, never 500", async () => {
    const siteId = await newSite();
    const p = await upload(siteId, sampleImage("png", { size: 800 }));
    const key = p.path as string;
    const get = (q: string, headers: Record<string, string> = {}) =>
      fetch(`${base}${p.publicUrl}${q}`, { headers });
    const code = async (r: Response) => ((await r.json()) as Json).error.code;

    const none = await get("");
    expect(none.status).toBe(403);
    expect(await code(none)).toBe("FORBIDDEN");
    expect((await get("?k=m.bogus")).status).toBe(403);
    const otherKey = mintGrant(h.ctx, { kind: "member", siteId, key: `site-media/${siteId}/other.png` });
    expect((await get(`?k=${otherKey}`)).status).toBe(403);
    const expired = mintGrant(h.ctx, { kind: "member", siteId, key, ttlSeconds: -1 });
    expect((await get(`?k=${expired}`)).status).toBe(403);
    const member = mintGrant(h.ctx, { kind: "member", siteId, key });
    expect((await get(`?k=${member}`)).status).toBe(200);
    expect((await get(`?k=${member.slice(0, -2)}xx`)).status).toBe(403);

    // Visitor grants: only while the site named in the grant is published, re-checked on every read.
    const visitor = mintGrant(h.ctx, { kind: "visitor", siteId, key });
    expect((await get(`?k=${visitor}`)).status).toBe(403);
    await h.call("POST", `/api/v1/sites/${siteId}/publish`, { key: owner.key });
    const live = await get(`?k=${visitor}`);
    expect(live.status).toBe(200);
    expect(live.headers.get("cache-control")).toStartWith("public");
    await h.call("POST", `/api/v1/sites/${siteId}/unpublish`, { key: owner.key });
    expect((await get(`?k=${visitor}`)).status).toBe(403);

    // Share tokens open one path for consumers without a session.
    const { url: shareUrl } = await shareMedia(h.ctx, { siteId, key });
    const shared = new URL(shareUrl);
    expect(shared.pathname).toBe(p.publicUrl);
    expect((await get(shared.search)).status).toBe(200);
    expect((await get(`${shared.search}x`)).status).toBe(403);

    // Session cookies: members of the site's organization read bare paths; others do not.
    const { cookie } = await createUserSession(h.ctx, owner.user.id);
    const bySession = await get("", { cookie });
    expect(bySession.status).toBe(200);
    expect(bySession.headers.get("cache-control")).toStartWith("private");
    const stranger = await h.seedOrg();
    const { cookie: strangerCookie } = await createUserSession(h.ctx, stranger.user.id);
    expect((await get("", { cookie: strangerCookie })).status).toBe(403);
    expect((await get("", { cookie: "site_session=forged" })).status).toBe(403);

    // No such object: 404 with a valid grant; keys escaping the root: 404, never 500.
    const missingKey = `site-media/${siteId}/missing.png`;
    const missing = await fetch(
      `${base}/api/media/${missingKey}?k=${mintGrant(h.ctx, { kind: "member", siteId, key: missingKey })}`,
    );
    expect(missing.status).toBe(404);
    for (const path of [
      "..%2f..%2fetc%2fpasswd",
      "site-media/%2e%2e/%2e%2e/x",
      "site-media/a%00b.png",
      "%2fetc%2fpasswd",
    ]) {
      const r = await fetch(`${base}/api/media/${path}`);
      expect([403, 404]).toContain(r.status);
    }
  });

  test("identity assets under avatars/ and organization-logos/ are public", async () => {
    await d.store.put("avatars/u1.png", sampleImage("png"), { contentType: "image/png" });
    await d.store.put("organization-logos/o1.png", sampleImage("png"), { contentType: "image/png" });
    expect((await fetch(`${base}/api/media/avatars/u1.png`)).status).toBe(200);
    expect((await fetch(`${base}/api/media/organization-logos/o1.png`)).status).toBe(200);
    expect((await fetch(`${base}/api/media/avatars/none.png`)).status).toBe(404);
  });

  if (driver.name === "fs") {
    test("the local signed PUT checks signature, expiry, exact Content-Type and size", async () => {
      const siteId = await newSite();
      const png = sampleImage("png", { size: 1000 });
      const p = await prepare(siteId, { contentType: "image/png", size: png.length });
      const up = p.body.upload;
      const wrongType = await putBytes(up, png, { "Content-Type": "image/jpeg" });
      expect(wrongType.status).toBe(400);
      expect((await putBytes(up, sampleImage("png", { size: 2000 }))).status).toBe(400);
      const forged = { ...up, url: up.url.replace("X-Size=1000", "X-Size=2000") };
      expect((await putBytes(forged, sampleImage("png", { size: 2000 }))).status).toBe(403);
      d.clock.ms = 7201 * 1000;
      try {
        const late = await putBytes(up, png);
        expect(late.status).toBe(403);
      } finally {
        d.clock.ms = 0;
      }
      expect((await putBytes(up, png)).status).toBe(200);
      // A URL opens one upload: once landed, it cannot overwrite the file.
      expect((await putBytes(up, sampleImage("png", { size: 1000, width: 9 }))).status).toBe(403);
      expect((await list(siteId)).body.images).toHaveLength(1);
    });
  }

  if (driver.name === "s3") {
    test("legacy absolute storage URLs are recognized on read and mapped to the key", async () => {
      const siteId = await newSite();
      const p = await upload(siteId, sampleImage("webp", { size: 600 }), "image/webp");
      const legacy = `${d.env.S3_ENDPOINT}/${d.env.S3_BUCKET}/${p.path}`;
      const k = mintGrant(h.ctx, { kind: "member", siteId, key: p.path });
      expect((await fetch(`${base}/api/media/${legacy}?k=${k}`)).status).toBe(200);
      const page = await h.call("POST", `/api/v1/sites/${siteId}/pages`, {
        key: owner.key,
        body: {
          path: `/legacy-${uniq()}`,
          title: "L",
          content: `<Column fillWidth><Column fillWidth><Media src="${legacy}" alt="" /></Column></Column>`,
        },
      });
      expect(page.status).toBe(201);
    });
  }
});
