import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addClipToLibrary } from "@site/domain/screenshots";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp } from "../../testing/social.ts";

// Issue 26: "a clip posts as video to every platform whose adapter takes video". A real device clip (the
// committed docs/screenshots/clip-phone-orbit.mp4, H.264 from the clip pipeline, with its poster) is
// listed in the social library exactly as the clip worker lists it, then posted as video to all six
// platforms through the strict fakes: X chunked tweet_video, Instagram REELS, Threads VIDEO, TikTok
// FILE_UPLOAD, LinkedIn's Videos API (4 MB parts, ETags, finalize, AVAILABLE), Reddit kind=video with
// its poster. Every fake checks that the bytes it got are an MP4 (the `ftyp` box).

const ROOT = join(import.meta.dir, "../../../..");
const MP4 = new Uint8Array(readFileSync(join(ROOT, "docs/screenshots/clip-phone-orbit.mp4")));
const POSTER = new Uint8Array(readFileSync(join(ROOT, "docs/screenshots/clip-phone-orbit.jpg")));
const PLATFORMS = ["instagram", "threads", "x", "linkedin", "reddit", "tiktok"] as const;

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

describe("a device clip posts as video to every platform (issue 26)", () => {
  test("the committed clip MP4, listed as kind video, is published as video on all six platforms; each fake got the MP4's exact bytes", async () => {
    expect(String.fromCharCode(...MP4.subarray(4, 8))).toBe("ftyp");
    const { key, org } = await h.seedOrg();
    const { mediaId } = await addClipToLibrary(h.ctx, org.id, {
      video: MP4,
      poster: POSTER,
      width: 1080,
      height: 1350,
      baseName: "clip-phone-orbit",
    });
    const listed = (await body(await h.call("GET", "/api/v1/social/media", { key }))).media;
    expect(listed.map((m: Json) => [m.id, m.kind, m.contentType])).toEqual([[mediaId, "video", "video/mp4"]]);
    const accounts = await Promise.all(
      PLATFORMS.map((p) => connectSocialAccount(h, key, p, p === "x" ? { tier: "basic" } : {})),
    );
    // A contract-shaped post: no platformOptions (TikTok on an unaudited app posts SELF_ONLY).
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "Our product page, in motion", media: [mediaId], accounts: accounts.map((a) => a.id) },
    });
    expect(res.status).toBe(201);
    const post = (await body(res)).post;
    expect(post.targets.map((t: Json) => [t.platform, t.status, t.error])).toEqual(
      PLATFORMS.map((p) => [p, "published", null]),
    );
    const rows = await h.sql<{ platform: string; platform_post_id: string }[]>`
      select platform, platform_post_id from social_targets where post_id = ${post.postId}`;
    for (const r of rows) {
      const got = fake.publication(r.platform_post_id);
      expect({ platform: r.platform, media: got?.media }).toEqual({
        platform: r.platform,
        media: [{ contentType: "video/mp4", size: MP4.byteLength }],
      });
    }
    // The flows each reference names, per platform.
    const calls = (p: string) => {
      const mine = fake.requests.filter((r) => r.platform === p);
      // The calls the platform saw, ids and account names replaced, uploads to the URLs it handed out included.
      return mine.map(
        (r) =>
          `${r.method} ${r.path.replace(/[0-9]{3,}|urn%3Ali%3Avideo%3A\w+|p_pub_url~[\w.]+|(?:instagram|threads|reddit)-[a-z0-9]{6}\b/g, "<id>")}`,
      );
    };
    expect(calls("instagram")[0]).toStartWith("POST /v25.0/<id>/media?media_type=REELS&video_url=");
    expect(calls("threads")[0]).toStartWith("POST /v1.0/<id>/threads?media_type=VIDEO&video_url=");
    expect(calls("x").slice(0, 3)).toEqual([
      "POST /media/upload/initialize",
      "POST /media/upload/<id>/append",
      "POST /media/upload/<id>/finalize",
    ]);
    expect(calls("linkedin")).toEqual([
      "POST /rest/videos?action=initializeUpload",
      "PUT /upload-video/<id>/0",
      "POST /rest/videos?action=finalizeUpload",
      "GET /rest/videos/<id>",
      "GET /rest/videos/<id>",
      "POST /rest/posts",
    ]);
    expect(calls("reddit").slice(0, 5)).toEqual([
      "POST /api/media/asset.json",
      "POST /media-upload",
      "POST /api/media/asset.json",
      "POST /media-upload",
      "POST /api/submit",
    ]);
    expect(calls("tiktok")).toContain("POST /post/publish/video/init/");
    expect(calls("tiktok").some((c) => c.startsWith("PUT /tiktok-upload/"))).toBe(true);
  });

  test("a video that is not an MP4 is refused by LinkedIn's processing (PROCESSING_FAILED) and Reddit's storage: the target fails, nothing posted", async () => {
    const { key, org } = await h.seedOrg();
    // 80 KB that are not an MP4, stored as a clip would be (the library's own type check is bypassed).
    const notMp4 = new Uint8Array(80 * 1024).fill(7);
    const { mediaId } = await addClipToLibrary(h.ctx, org.id, {
      video: notMp4,
      poster: POSTER,
      width: 1080,
      height: 1350,
      baseName: "broken",
    });
    const accounts = await Promise.all(["linkedin", "reddit"].map((p) => connectSocialAccount(h, key, p)));
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "broken", media: [mediaId], accounts: accounts.map((a) => a.id) },
    });
    expect(res.status).toBe(201);
    const targets = (await body(res)).post.targets as Json[];
    expect(targets.map((t) => t.status)).toEqual(["failed", "failed"]);
    expect(targets[0]!.error).toContain("PROCESSING_FAILED");
  });
});
