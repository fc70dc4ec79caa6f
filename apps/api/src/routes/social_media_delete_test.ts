import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createCanvas } from "@napi-rs/canvas";
import { addLibraryFile } from "@site/domain/media";
import { addClipToLibrary } from "@site/domain/screenshots";
import { sampleImage } from "@site/domain/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// DELETE /api/v1/social/media/<id> (decision 1300): the row, the stored bytes and their quota go; a
// registered site file keeps its bytes; a file an unpublished post lists answers 409 CONFLICT.
const ROOT = new URL("../../../..", import.meta.url).pathname;
let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: { ...fake.env, SOCIAL_POLL_INTERVAL_MS: "5" } });
  fetchMediaFromApp(fake, h);
});
afterAll(async () => {
  fake.close();
  await h.close();
});

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;
const del = (key: string, id: string) => h.call("DELETE", `/api/v1/social/media/${id}`, { key });
const listed = async (key: string) =>
  (await body(await h.call("GET", "/api/v1/social/media", { key }))).media.map((m: Json) => m.id);
const used = async (orgId: string) =>
  (await h.sql`select storage_used_bytes::int as n from organizations where id = ${orgId}`)[0]!.n as number;
const keyOf = (url: string) => url.replace(/^\/api\/media\//, "");

const connect = async (key: string, platform: string, accessToken?: string) =>
  (await connectSocialAccount(h, key, platform, accessToken ? { accessToken } : {})).id;

describe("auth rules", () => {
  test("DELETE /api/v1/social/media/<id>: 401 without or with a bad key, 403 without social:write", async () => {
    await expectAuthRules(h, {
      method: "DELETE",
      path: "/api/v1/social/media/00000000-0000-4000-8000-000000000000",
      scope: "social:write",
    });
  });
});

describe("deleting a file of the social library", () => {
  test("an upload: 204, no longer listed, its bytes deleted and its size given back to the quota; again 404", async () => {
    const { key, org } = await h.seedOrg();
    const before = await used(org.id);
    const file = await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 700 }), "image/jpeg");
    expect(await used(org.id)).toBe(before + 700);
    expect(await h.store.head(keyOf(file.url))).not.toBeNull();
    const res = await del(key, file.id);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(await listed(key)).toEqual([]);
    expect(await h.sql`select 1 from social_media where id = ${file.id}`).toHaveLength(0);
    expect(await h.store.head(keyOf(file.url))).toBeNull();
    expect(await used(org.id)).toBe(before);
    const again = await del(key, file.id);
    expect(again.status).toBe(404);
    expect((await body(again)).error.code).toBe("NOT_FOUND");
  });

  test("the JPEG made from a PNG for Instagram goes with it, bytes and quota", async () => {
    const { key, org } = await h.seedOrg();
    const ig = await connect(key, "instagram");
    const canvas = createCanvas(30, 20);
    canvas.getContext("2d").fillRect(0, 0, 10, 10);
    const png = new Uint8Array(await canvas.encode("png"));
    const before = await used(org.id);
    const file = await uploadSocialMedia(h, key, png, "image/png");
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "converted", media: [file.id], accounts: [ig] },
    });
    expect((await body(res)).post.targets[0].status).toBe("published");
    const [derived] = await h.sql<{ key: string; size: number }[]>`
      select key, size::int as size from social_media where org_id = ${org.id} and source = 'derived'`;
    expect(derived).toBeDefined();
    expect(await used(org.id)).toBe(before + png.byteLength + derived!.size);
    expect((await del(key, file.id)).status).toBe(204);
    expect(await h.sql`select 1 from social_media where org_id = ${org.id}`).toHaveLength(0);
    expect(await h.store.head(derived!.key)).toBeNull();
    expect(await h.store.head(keyOf(file.url))).toBeNull();
    expect(await used(org.id)).toBe(before);
  });

  test("a device clip: its hidden poster frame goes with the MP4, bytes and quota", async () => {
    const { key, org } = await h.seedOrg();
    const before = await used(org.id);
    const video = new Uint8Array(readFileSync(join(ROOT, "docs/screenshots/clip-phone-orbit.mp4")));
    const poster = new Uint8Array(readFileSync(join(ROOT, "docs/screenshots/clip-phone-orbit.jpg")));
    const clip = await addClipToLibrary(h.ctx, org.id, {
      video,
      poster,
      width: 1080,
      height: 1350,
      baseName: "clip-phone-orbit",
    });
    expect(await used(org.id)).toBe(before + video.byteLength + poster.byteLength);
    expect(await h.store.head(clip.posterKey)).not.toBeNull();
    expect((await del(key, clip.mediaId)).status).toBe(204);
    expect(await h.sql`select key from social_media where org_id = ${org.id}`).toHaveLength(0);
    expect(await h.store.head(clip.videoKey)).toBeNull();
    expect(await h.store.head(clip.posterKey)).toBeNull();
    expect(await used(org.id)).toBe(before);
  });

  test("a registered site file is only unlisted: its bytes stay with the site, counted once by it", async () => {
    const { key, org } = await h.seedOrg();
    const site = (
      await body(
        await h.call("POST", "/api/v1/sites", { key, body: { name: "S", slug: `del-${Date.now()}` } }),
      )
    ).site;
    const file = await addLibraryFile(h.ctx, {
      siteId: site.id,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const reg = await body(await h.call("POST", "/api/v1/social/media", { key, body: { url: file.url } }));
    const before = await used(org.id);
    expect((await del(key, reg.media.id)).status).toBe(204);
    expect(await listed(key)).toEqual([]);
    expect(await h.store.head(file.key)).not.toBeNull();
    expect(await used(org.id)).toBe(before);
    const siteMedia = await body(await h.call("GET", `/api/v1/sites/${site.id}/media`, { key }));
    expect(siteMedia.images.map((i: Json) => i.url)).toEqual([file.url]);
  });

  test("a file a post not yet published lists: 409 CONFLICT naming the post, nothing changed; once published it may go", async () => {
    const { key, org } = await h.seedOrg();
    const file = await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 400 }), "image/jpeg");
    const revoked = await connect(key, "linkedin", "tok-revoked-delete-test");
    fake.expire("tok-revoked-delete-test");
    const failed = await body(
      await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "not out yet", media: [file.id], accounts: [revoked] },
      }),
    );
    expect(failed.post.publishedAt).toBeNull();
    const before = await used(org.id);
    const res = await del(key, file.id);
    expect(res.status).toBe(409);
    const err = (await body(res)).error;
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain(failed.post.postId);
    expect(err.details).toEqual({ posts: [failed.post.postId] });
    expect(await listed(key)).toEqual([file.id]);
    expect(await h.store.head(keyOf(file.url))).not.toBeNull();
    expect(await used(org.id)).toBe(before);

    const other = await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 300 }), "image/jpeg");
    const reddit = await connect(key, "reddit");
    const published = await body(
      await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "out", media: [other.id], accounts: [reddit] },
      }),
    );
    expect(published.post.publishedAt).not.toBeNull();
    expect((await del(key, other.id)).status).toBe(204);
    expect(await listed(key)).toEqual([file.id]);
  });

  test("another organization's file, an unknown or malformed id, a prepared upload: 404, nothing deleted", async () => {
    const a = await h.seedOrg();
    const b = await h.seedOrg();
    const theirs = await uploadSocialMedia(h, b.key, sampleImage("jpeg", { size: 200 }), "image/jpeg");
    const prepared = await body(
      await h.call("POST", "/api/v1/social/media/upload", {
        key: a.key,
        body: { contentType: "image/png", size: 100 },
      }),
    );
    for (const id of [theirs.id, "00000000-0000-4000-8000-000000000000", "not-an-id", prepared.media.id]) {
      const res = await del(a.key, id);
      expect(res.status).toBe(404);
      expect((await body(res)).error.code).toBe("NOT_FOUND");
    }
    expect(await listed(b.key)).toEqual([theirs.id]);
    expect(await h.store.head(keyOf(theirs.url))).not.toBeNull();
  });
});
