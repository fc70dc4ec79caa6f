import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadPublishMedia } from "@site/domain/social";
import { sampleImage, sampleVideo } from "@site/domain/testing";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { uploadSocialMedia } from "../../testing/social.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp({ env: { SOCIAL_VIDEO_MAX_BYTES: "4096" } });
});
afterAll(() => h.close());

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;

/** PUTs bytes to a signed upload URL through the app (the local-disk store's own route). */
async function put(upload: Json, bytes: Uint8Array, headers: Record<string, string> = upload.headers) {
  const path = new URL(upload.url).pathname + new URL(upload.url).search;
  return h.app.handle(
    new Request(`http://localhost${path}`, {
      method: "PUT",
      headers,
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    }),
  );
}
const get = (url: string) => h.app.handle(new Request(`http://localhost${url}`));

async function prepare(key: string, b: Json) {
  const res = await h.call("POST", "/api/v1/social/media/upload", { key, body: b });
  return { status: res.status, body: await body(res) };
}

const uploadSocial = (key: string, bytes: Uint8Array, contentType: string) =>
  uploadSocialMedia(h, key, bytes, contentType);

const list = async (key: string, q = "") => body(await h.call("GET", `/api/v1/social/media${q}`, { key }));

describe("auth rules", () => {
  for (const route of [
    { method: "GET", path: "/api/v1/social/media" },
    { method: "POST", path: "/api/v1/social/media", body: { url: "/api/media/x" } },
    { method: "POST", path: "/api/v1/social/media/upload", body: { contentType: "image/png", size: 10 } },
  ])
    test(`${route.method} ${route.path}: 401 without or with a bad key, 403 without social:write`, async () => {
      await expectAuthRules(h, { ...route, scope: "social:write" });
    });
});

describe("signed uploads into the social library", () => {
  test("an image: listed once its bytes land, under the organization's prefix, thumbnailUrl signed, never public", async () => {
    const { key, org } = await h.seedOrg();
    const bytes = sampleImage("jpeg", { width: 40, height: 30, size: 500 });
    const p = await prepare(key, { contentType: "image/jpeg", size: 500, name: "Launch Photo.jpg" });
    expect(p.status).toBe(201);
    expect(p.body.upload).toMatchObject({
      method: "PUT",
      headers: { "Content-Type": "image/jpeg" },
      expiresInSeconds: 7200,
    });
    expect((await list(key)).media).toEqual([]);
    expect((await put(p.body.upload, bytes)).status).toBe(200);
    const { media, nextCursor } = await list(key);
    expect(nextCursor).toBeNull();
    expect(media).toHaveLength(1);
    expect(media[0]).toMatchObject({
      id: p.body.media.id,
      kind: "image",
      contentType: "image/jpeg",
      size: 500,
      width: 40,
      height: 30,
    });
    expect(media[0].url).toStartWith(`/api/media/social-media/${org.id}/launch-photo-`);
    expect(media[0].thumbnailUrl).toStartWith(`${media[0].url}?k=`);
    const thumb = await get(media[0].thumbnailUrl);
    expect(thumb.status).toBe(200);
    expect(new Uint8Array(await thumb.arrayBuffer())).toEqual(bytes);
    expect((await get(media[0].url)).status).toBe(403);
    const [used] = await h.sql`select storage_used_bytes::int as n from organizations where id = ${org.id}`;
    expect(used!.n).toBe(500);
    const other = await h.seedOrg();
    expect((await list(other.key)).media).toEqual([]);
    // Another organization's grant does not open this organization's file.
    const theirs = await uploadSocial(other.key, sampleImage("png", { size: 100 }), "image/png");
    const grant = new URL(`http://x${(await list(other.key)).media[0].thumbnailUrl}`).searchParams.get("k");
    expect((await get(`${media[0].url}?k=${grant}`)).status).toBe(403);
    expect(theirs.id).toBeString();
  });

  test("MP4 up to SOCIAL_VIDEO_MAX_BYTES, typed from its bytes; larger, SVG, or images over 10485760: 400", async () => {
    const { key } = await h.seedOrg();
    const video = await uploadSocial(key, sampleVideo(4096), "video/mp4");
    expect((await list(key)).media[0]).toMatchObject({
      id: video.id,
      kind: "video",
      contentType: "video/mp4",
    });
    for (const b of [
      { contentType: "video/mp4", size: 4097 },
      { contentType: "image/svg+xml", size: 100 },
      { contentType: "image/png", size: 10485761 },
      { contentType: "video/quicktime", size: 100 },
      { contentType: "image/png", size: 0 },
    ]) {
      const p = await prepare(key, b);
      expect(p.status).toBe(400);
      expect(p.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("bytes that are not the declared type are refused on landing and never listed", async () => {
    const { key } = await h.seedOrg();
    const p = await prepare(key, { contentType: "image/png", size: 300 });
    const res = await put(p.body.upload, sampleImage("jpeg", { size: 300 }));
    expect(res.status).toBe(400);
    expect((await body(res)).error.code).toBe("VALIDATION_ERROR");
    expect((await list(key)).media).toEqual([]);
    // The URL is spent.
    expect((await put(p.body.upload, sampleImage("png", { size: 300 }))).status).toBe(403);
  });

  test("the storage quota counts landed and pending uploads: 403 when a file would not fit", async () => {
    const { key } = await h.seedOrg({ storageQuotaBytes: 1000 });
    expect((await prepare(key, { contentType: "image/png", size: 1001 })).status).toBe(403);
    await uploadSocial(key, sampleImage("png", { size: 600 }), "image/png");
    const over = await prepare(key, { contentType: "image/png", size: 401 });
    expect([over.status, over.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await prepare(key, { contentType: "image/png", size: 400 })).status).toBe(201);
  });

  test("newest first with a keyset cursor", async () => {
    const { key } = await h.seedOrg();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await uploadSocial(key, sampleImage("gif", { size: 64 }), "image/gif")).id);
    const first = await list(key, "?limit=2");
    expect(first.media.map((m: Json) => m.id)).toEqual([ids[2], ids[1]]);
    const second = await list(key, `?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.media.map((m: Json) => m.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
    expect((await h.call("GET", "/api/v1/social/media?limit=0", { key })).status).toBe(400);
  });
});

describe("registering a site library file", () => {
  test("a file of one of the organization's sites, by its path; not copied; a foreign or unknown path: 400", async () => {
    const { key } = await h.seedOrg();
    const site = (
      await body(await h.call("POST", "/api/v1/sites", { key, body: { name: "S", slug: `s-${Date.now()}` } }))
    ).site;
    const bytes = sampleImage("png", { width: 5, height: 6, size: 200 });
    const p = await h.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
      key,
      body: { contentType: "image/png", size: 200 },
    });
    const prepared = await body(p);
    expect((await put(prepared.upload, bytes)).status).toBe(200);
    const res = await h.call("POST", "/api/v1/social/media", { key, body: { url: prepared.publicUrl } });
    expect(res.status).toBe(201);
    const { media } = await body(res);
    expect(media).toMatchObject({
      kind: "image",
      contentType: "image/png",
      width: 5,
      height: 6,
      url: prepared.publicUrl,
    });
    expect((await get(media.thumbnailUrl)).status).toBe(200);
    const again = await body(
      await h.call("POST", "/api/v1/social/media", { key, body: { url: prepared.publicUrl } }),
    );
    expect(again.media.id).toBe(media.id);
    const other = await h.seedOrg();
    for (const url of [
      prepared.publicUrl,
      "/api/media/site-media/nope.png",
      "https://elsewhere.example/a.png",
    ]) {
      const r = await h.call("POST", "/api/v1/social/media", { key: other.key, body: { url } });
      expect(r.status).toBe(400);
      expect((await body(r)).error.code).toBe("VALIDATION_ERROR");
    }
    // The site deleted (its grace not over): its files leave the social library, and none is taken again.
    expect((await h.call("DELETE", `/api/v1/sites/${site.id}`, { key })).status).toBe(204);
    const listed = await body(await h.call("GET", "/api/v1/social/media", { key }));
    expect(listed.media.map((m: Json) => m.id)).not.toContain(media.id);
    const late = await h.call("POST", "/api/v1/social/media", { key, body: { url: prepared.publicUrl } });
    expect(late.status).toBe(400);
    expect((await body(late)).error.code).toBe("VALIDATION_ERROR");
    expect(await h.sql`select 1 from social_media where id = ${media.id}`).toHaveLength(0);
  });
});

describe("share tokens for the platforms", () => {
  test("publishing mints a share URL on PUBLIC_BASE_URL valid a bounded time, that the delivery route serves", async () => {
    const { key, org } = await h.seedOrg();
    const m = await uploadSocial(key, sampleImage("jpeg", { size: 128 }), "image/jpeg");
    const [media] = await loadPublishMedia(h.ctx, org.id, [m.id]);
    expect(media!.url).toStartWith(`${h.ctx.config.publicBaseUrl}/api/media/social-media/${org.id}/`);
    const t = new URL(media!.url).searchParams.get("t")!;
    const exp = Number(t.split(".")[1]);
    expect(exp * 1000 - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(exp * 1000 - Date.now()).toBeGreaterThan(86_000_000);
    const served = await get(media!.url.slice(h.ctx.config.publicBaseUrl.length));
    expect(served.status).toBe(200);
    expect((await media!.read()).byteLength).toBe(128);
    // A token for one file opens no other.
    const other = await uploadSocial(key, sampleImage("jpeg", { size: 64 }), "image/jpeg");
    const otherPath = (await list(key)).media.find((x: Json) => x.id === other.id).url;
    expect((await get(`${otherPath}?t=${t}`)).status).toBe(403);
  });
});
