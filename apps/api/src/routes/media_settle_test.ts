import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mediaFiles, mediaUploads, organizations } from "@site/db";
import { mintGrant, sweepMedia } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { openFsStore, openS3Store } from "@site/storage";
import { startTestS3 } from "@site/storage/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

describe("uploads settle when they land, not on every list (S3: bytes go straight to the store)", () => {
  let s3: Awaited<ReturnType<typeof startTestS3>>;
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  const queries: string[] = [];
  beforeAll(async () => {
    s3 = await startTestS3();
    h = await buildTestApp({
      store: openS3Store(s3.options),
      env: { MEDIA_SWEEP_EVERY_MS: "0" },
      onQuery: (q) => queries.push(q),
    });
    owner = await h.seedOrg({ siteLimit: 50 });
  });
  afterAll(async () => {
    await h.store.close();
    await h.close();
    await s3.stop();
  });
  const newSite = async () => {
    const res = await h.call("POST", "/api/v1/sites", {
      key: owner.key,
      body: { name: "S", slug: `u-${uniq()}` },
    });
    return ((await res.json()) as Json).site.id as string;
  };
  /** Prepares an upload and PUTs the bytes to S3, as a client does; does not complete it. */
  const putToS3 = async (siteId: string, bytes: Uint8Array, contentType = "image/png") => {
    const prep = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/media/upload`, {
        key: owner.key,
        body: { contentType, size: bytes.byteLength },
      })
    ).json()) as Json;
    const put = await fetch(prep.upload.url, {
      method: "PUT",
      headers: prep.upload.headers,
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    });
    expect(put.status).toBe(200);
    return prep as { name: string; path: string; publicUrl: string };
  };
  const listed = async (siteId: string) =>
    (
      (await (await h.call("GET", `/api/v1/sites/${siteId}/media`, { key: owner.key })).json()) as Json
    ).images.map((i: Json) => i.name);
  const complete = (siteId: string, name: string) =>
    h.call("POST", `/api/v1/sites/${siteId}/media/upload/${name}/complete`, { key: owner.key });

  test("a media list does not touch the store, and answers in one round trip", async () => {
    const siteId = await newSite();
    const up = await putToS3(siteId, sampleImage("png", { size: 1500 }));
    await h.call("GET", `/api/v1/sites/${siteId}/media`, { key: owner.key }); // warms the key cache
    queries.length = 0;
    expect(await listed(siteId)).toEqual([]); // landed in S3, but nobody said so yet
    expect(queries).toHaveLength(1);
    // Another organization's site is a 404, in the same single query.
    const other = await h.seedOrg();
    queries.length = 0;
    expect((await h.call("GET", `/api/v1/sites/${siteId}/media`, { key: other.key })).status).toBe(404);
    expect(queries.filter((q) => !/api_keys/.test(q))).toHaveLength(1);
    expect((await complete(siteId, up.name)).status).toBe(200);
  });

  test("GET /api/v1/sites answers in one round trip once the key is cached", async () => {
    await h.call("GET", "/api/v1/sites", { key: owner.key });
    queries.length = 0;
    expect((await h.call("GET", "/api/v1/sites", { key: owner.key })).status).toBe(200);
    expect(queries).toHaveLength(1);
  });

  test("POST …/upload/<name>/complete lands it (idempotent); 400 before the PUT; 404 for another site's", async () => {
    const siteId = await newSite();
    const bytes = sampleImage("png", { width: 7, height: 5, size: 2222 });
    const prep = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/media/upload`, {
        key: owner.key,
        body: { contentType: "image/png", size: bytes.byteLength },
      })
    ).json()) as Json;
    const early = await complete(siteId, prep.name);
    expect(early.status).toBe(400);
    expect(((await early.json()) as Json).error.message).toMatch(/no bytes have arrived/);
    await fetch(prep.upload.url, { method: "PUT", headers: prep.upload.headers, body: new Blob([bytes]) });
    const done = await complete(siteId, prep.name);
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({
      publicUrl: prep.publicUrl,
      path: prep.path,
      name: prep.name,
      url: prep.publicUrl,
      size: 2222,
      // the AddedMediaFile model: the same answer as an import, with its embed snippet (decision 0050)
      embed: expect.stringContaining(`src="${prep.publicUrl}"`),
    });
    expect((await complete(siteId, prep.name)).status).toBe(200);
    expect(await listed(siteId)).toEqual([prep.name]);
    const [row] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.key, prep.path));
    expect(row).toMatchObject({ width: 7, height: 5, size: 2222, source: "upload" });
    const [org] = await h.db.select().from(organizations).where(eq(organizations.id, owner.org.id));
    expect(org!.storageUsedBytes).toBeGreaterThanOrEqual(2222);
    expect((await complete(await newSite(), prep.name)).status).toBe(404);
    expect((await complete(siteId, "nope.png")).status).toBe(404);
  });

  test("completing bytes that are not the declared image answers 400 and deletes them", async () => {
    const siteId = await newSite();
    const up = await putToS3(siteId, sampleImage("svg", { size: 600 }), "image/png");
    const res = await complete(siteId, up.name);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.code).toBe("VALIDATION_ERROR");
    expect(await h.store.head(up.path)).toBeNull();
    expect(await listed(siteId)).toEqual([]);
  });

  test("the first read of that one upload settles it (delivery with a member grant)", async () => {
    const siteId = await newSite();
    const bytes = sampleImage("webp", { size: 900 });
    const up = await putToS3(siteId, bytes, "image/webp");
    const k = mintGrant(h.ctx, { kind: "member", siteId, key: up.path });
    const read = await h.call("GET", `${up.publicUrl}?k=${k}`);
    expect(read.status).toBe(200);
    expect(new Uint8Array(await read.arrayBuffer())).toEqual(bytes);
    expect(await listed(siteId)).toEqual([up.name]);
  });

  test("the background sweeper settles what nobody completed, and expires lapsed URLs without bytes", async () => {
    const siteId = await newSite();
    const up = await putToS3(siteId, sampleImage("gif", { size: 800 }), "image/gif");
    const never = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/media/upload`, {
        key: owner.key,
        body: { contentType: "image/png", size: 100 },
      })
    ).json()) as Json;
    await h.db
      .update(mediaUploads)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mediaUploads.key, never.path));
    const pass = await sweepMedia(h.ctx);
    expect(pass.settled).toBeGreaterThanOrEqual(1);
    expect(pass.expired).toBeGreaterThanOrEqual(1);
    expect(await listed(siteId)).toEqual([up.name]);
    const [row] = await h.db.select().from(mediaUploads).where(eq(mediaUploads.key, never.path));
    expect(row!.status).toBe("expired");
  });
});

describe("the sweeper removes half-written temporary files and orphaned objects (local disk)", () => {
  let root: string;
  let h: TestApp;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "sweep-"));
    h = await buildTestApp({
      store: openFsStore({
        root,
        publicBaseUrl: "http://127.0.0.1:3000",
        secretKey: "test-secret-key-0123456789",
      }),
      env: { MEDIA_SWEEP_EVERY_MS: "0", UPLOAD_TRANSFER_TIMEOUT_MS: "60000", IMPORT_TIMEOUT_MS: "5000" },
    });
  });
  afterAll(async () => {
    await h.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("temporary files older than the longest allowed transfer go; younger ones stay", async () => {
    mkdirSync(join(root, ".tmp"), { recursive: true });
    const old = join(root, ".tmp", "half-written-1");
    const young = join(root, ".tmp", "being-written-2");
    writeFileSync(old, new Uint8Array(5000));
    writeFileSync(young, new Uint8Array(5000));
    const longAgo = new Date(Date.now() - 3 * 60_000); // transfer limit 60 s + 60 s margin
    utimesSync(old, longAgo, longAgo);
    const pass = await sweepMedia(h.ctx);
    expect(pass.tempRemoved).toBe(1);
    expect(readdirSync(join(root, ".tmp")).sort()).toEqual(["being-written-2"]);
  });

  test("an object no row claims is removed after the grace; listed files and pending uploads stay", async () => {
    const { key } = await h.seedOrg();
    const site = (await (
      await h.call("POST", "/api/v1/sites", { key, body: { name: "O", slug: `o-${uniq()}` } })
    ).json()) as Json;
    const siteId = site.site.id as string;
    const png = sampleImage("png", { size: 1200 });
    // A process killed between storing an import and writing its row leaves exactly this.
    await h.store.put(`site-media/${siteId}/orphan-1.png`, png, { contentType: "image/png" });
    // A pending signed upload's bytes, and a listed file.
    const prep = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/media/upload`, {
        key,
        body: { contentType: "image/png", size: png.byteLength },
      })
    ).json()) as Json;
    await h.store.put(prep.path, png, { contentType: "image/png" });
    const imported = `site-media/${siteId}/kept.png`;
    await h.store.put(imported, png, { contentType: "image/png" });
    await h.db.insert(mediaFiles).values({
      siteId,
      key: imported,
      name: "kept.png",
      contentType: "image/png",
      size: png.byteLength,
      source: "import",
    });
    // Within the grace nothing goes.
    expect((await sweepMedia(h.ctx, { orphans: true, orphanGraceMs: 60_000 })).orphansRemoved).toBe(0);
    await Bun.sleep(20);
    const pass = await sweepMedia(h.ctx, { orphans: true, orphanGraceMs: 1 });
    expect(pass.orphansRemoved).toBe(1);
    expect(await h.store.head(`site-media/${siteId}/orphan-1.png`)).toBeNull();
    expect(await h.store.head(imported)).not.toBeNull();
    // The pending upload was settled by the same pass (its bytes had landed), so it is a file now.
    expect(await h.store.head(prep.path)).not.toBeNull();
  });
});
