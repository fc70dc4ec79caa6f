import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { systemClock } from "@site/config";
import {
  type AdapterAccount,
  PlatformError,
  type PublishInput,
  type PublishMedia,
  type SocialPlatform,
} from "@site/domain/social";
import { sampleImage, sampleVideo } from "@site/domain/testing";
import { startFakePlatforms } from "../testing/fake_platforms.ts";
import { createPlatformAdapters } from "./adapters.ts";
import { tiktokChunks } from "./tiktok.ts";

// Each platform's publishing rules, held by the strict fake: the adapter obeys them (a test per rule),
// and the fake refuses the mistakes the real platform refuses (asked directly, as a wrong client would).

const fake = startFakePlatforms();
const poll = { intervalMs: 5, maxAttempts: 10 };
const config = {
  socialApiBase: fake.bases,
  social: { poll, linkedinVersion: "202607", tiktokVerifiedUrlPrefixes: [fake.mediaPrefix] },
};
const adapters = createPlatformAdapters({ config, clock: systemClock });
afterAll(() => fake.close());
afterEach(() => fake.setProcessingChecks(0));

function account(platform: SocialPlatform): AdapterAccount {
  return {
    platform,
    accountId: `acct-${platform}-${Math.random().toString(36).slice(2, 8)}`,
    displayName: "Acme",
    accessToken: `tok-${platform}-${Math.random().toString(36).slice(2)}`,
    permissions: [],
    tier: "basic",
  };
}

type Kind = "jpeg" | "png" | "webp" | "gif" | "mp4";
const TYPES: Record<Kind, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  mp4: "video/mp4",
};

/** A file hosted on the fake, as a post carries it (declared type from its bytes unless `declared`). */
function file(kind: Kind, declared?: Kind): PublishMedia {
  const bytes = kind === "mp4" ? sampleVideo(300) : sampleImage(kind, { size: 300 });
  const contentType = TYPES[declared ?? kind];
  return {
    kind: contentType.startsWith("video/") ? "video" : "image",
    contentType,
    size: bytes.byteLength,
    url: fake.host(bytes, contentType),
    read: async () => bytes,
  };
}
const files = (n: number, kind: Kind = "jpeg") => Array.from({ length: n }, () => file(kind));
const calls = (a: AdapterAccount) =>
  fake.requests
    .filter((r) => r.token === a.accessToken)
    .map((r) => `${r.method} ${r.path.split("?")[0]!.replace(/^\/v\d+\.\d+/, "")}`);
const publish = (a: AdapterAccount, post: PublishInput) => adapters[a.platform]!.publish(a, post);
const fails = (a: AdapterAccount, post: PublishInput) =>
  publish(a, post).then(
    () => {
      throw new Error("published, but should have failed");
    },
    (e) => e as PlatformError,
  );

describe("instagram: media containers", () => {
  test("one JPEG: a container with image_url, polled until status_code FINISHED, then published", async () => {
    fake.setProcessingChecks(2);
    const a = account("instagram");
    const done = await publish(a, { text: "caption", media: [file("jpeg")] });
    expect(fake.publication(done.platformPostId)).toEqual({
      platform: "instagram",
      text: "caption",
      media: [{ contentType: "image/jpeg", size: 300 }],
    });
    const c = calls(a);
    expect(c[0]).toBe(`POST /${a.accountId}/media`);
    // Three checks (two IN_PROGRESS, then FINISHED) before media_publish.
    expect(c.slice(1, 4).every((x) => x.startsWith("GET /17"))).toBe(true);
    expect(c[4]).toBe(`POST /${a.accountId}/media_publish`);
  });

  test("2–10 files: item containers (is_carousel_item) under one CAROUSEL container", async () => {
    const a = account("instagram");
    const done = await publish(a, { text: "three", media: [file("jpeg"), file("mp4"), file("jpeg")] });
    expect(fake.publication(done.platformPostId)?.media.map((m) => m.contentType)).toEqual([
      "image/jpeg",
      "video/mp4",
      "image/jpeg",
    ]);
    const created = fake.requests.filter((r) => r.token === a.accessToken && r.path.includes("/media?"));
    expect(created.filter((r) => r.path.includes("is_carousel_item=true"))).toHaveLength(3);
    expect(created.at(-1)?.path).toContain("media_type=CAROUSEL");
  });

  test("a video is a REELS container with video_url", async () => {
    const a = account("instagram");
    await publish(a, { text: "reel", media: [file("mp4")] });
    const created = fake.requests.find((r) => r.token === a.accessToken && r.path.includes("/media?"));
    expect(created?.path).toContain("media_type=REELS");
    expect(created?.path).toContain("video_url=");
  });

  test("text only, a PNG, or 11 files: refused before any call", async () => {
    const a = account("instagram");
    expect((await fails(a, { text: "just words", media: [] })).message).toContain(
      "instagram needs at least one",
    );
    expect((await fails(a, { text: "png", media: [file("png")] })).message).toContain("image/jpeg");
    expect((await fails(a, { text: "many", media: files(11) })).message).toContain("at most 10");
    expect(calls(a)).toEqual([]);
  });

  test("the platform fetches the file: bytes that are not JPEG end the container in ERROR, with the reason", async () => {
    const a = account("instagram");
    const err = await fails(a, { text: "lying type", media: [file("png", "jpeg")] });
    expect(err.message).toContain("container ERROR");
    expect(err.message).toContain("image/png is not accepted");
  });

  test("a container never FINISHED: a bounded wait, then a clear failure, nothing published", async () => {
    fake.setProcessingChecks(1000);
    const a = account("instagram");
    const err = await fails(a, { text: "slow", media: [file("jpeg")] });
    expect(err.message).toContain("still not ready after 10 checks");
    expect(calls(a).filter((c) => c.includes("media_publish"))).toEqual([]);
  });

  test("the fake refuses a caption-only container and publishing a container still IN_PROGRESS", async () => {
    const a = account("instagram");
    const auth = { authorization: `Bearer ${a.accessToken}` };
    const captionOnly = await fetch(`${fake.graphBases.instagram}/${a.accountId}/media?caption=hi`, {
      method: "POST",
      headers: auth,
    });
    expect(captionOnly.status).toBe(400);
    fake.setProcessingChecks(5);
    const url = file("jpeg").url;
    const c = (await (
      await fetch(`${fake.graphBases.instagram}/${a.accountId}/media?image_url=${encodeURIComponent(url)}`, {
        method: "POST",
        headers: auth,
      })
    ).json()) as { id: string };
    const early = await fetch(
      `${fake.graphBases.instagram}/${a.accountId}/media_publish?creation_id=${c.id}`,
      {
        method: "POST",
        headers: auth,
      },
    );
    expect(early.status).toBe(400);
    expect(((await early.json()) as { error: { code: number } }).error.code).toBe(9007);
  });
});

describe("threads: containers with status", () => {
  test("text, one image, and a carousel of 2–20, each waited on until status FINISHED", async () => {
    fake.setProcessingChecks(1);
    const a = account("threads");
    const t = await publish(a, { text: "words only", media: [] });
    expect(fake.publication(t.platformPostId)).toMatchObject({ text: "words only", media: [] });
    const i = await publish(a, { text: "a picture", media: [file("png")] });
    expect(fake.publication(i.platformPostId)?.media).toEqual([{ contentType: "image/png", size: 300 }]);
    const c = await publish(a, { text: "a set", media: files(20) });
    expect(fake.publication(c.platformPostId)?.media).toHaveLength(20);
    expect(calls(a).filter((x) => x.startsWith("GET /18")).length).toBeGreaterThan(20);
  });

  test("21 files or a WebP: refused before any call; the fake refuses text over 500 characters", async () => {
    const a = account("threads");
    expect((await fails(a, { text: "many", media: files(21) })).message).toContain("at most 20");
    expect((await fails(a, { text: "webp", media: [file("webp")] })).message).toContain("image/webp");
    expect(calls(a)).toEqual([]);
    const err = await fails(a, { text: "x".repeat(501), media: [] });
    expect(err.message).toContain("500 characters");
  });

  test("the fake counts an emoji as its UTF-8 bytes: 125 four-byte emoji are published, 126 refused", async () => {
    const a = account("threads");
    const ok = await publish(a, { text: "👾".repeat(125), media: [] });
    expect(fake.publishedText(ok.platformPostId)).toBe("👾".repeat(125));
    expect((await fails(a, { text: "👾".repeat(126), media: [] })).message).toContain("500 characters");
  });
});

describe("tiktok: Content Posting API", () => {
  const SELF = { privacyLevel: "SELF_ONLY" };
  const audited = createPlatformAdapters({
    config: { ...config, social: { ...config.social, tiktokAudited: true } },
    clock: systemClock,
  });

  test("an audited app's public post: the real post id (19 digits, beyond 2^53) comes from status/fetch once public", async () => {
    fake.setProcessingChecks(2);
    fake.setTikTokAudited(true);
    try {
      const a = account("tiktok");
      const done = await audited.tiktok!.publish(a, {
        text: "photos",
        media: [file("jpeg"), file("webp")],
        tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE" },
      });
      expect(done.platformPostId).toMatch(/^7\d{18}$/);
      expect(fake.publication(done.platformPostId)).toMatchObject({
        privacy: "PUBLIC_TO_EVERYONE",
        media: [
          { contentType: "image/jpeg", size: 300 },
          { contentType: "image/webp", size: 300 },
        ],
      });
      expect(calls(a).filter((c) => c.includes("status/fetch"))).toHaveLength(3);
    } finally {
      fake.setTikTokAudited(false);
    }
  });

  test("an unaudited app posts with the user's SELF_ONLY: published once complete, without a public id or URL (issue 33)", async () => {
    const a = account("tiktok");
    const done = await publish(a, { text: "photos", media: [file("jpeg"), file("webp")], tiktok: SELF });
    expect(done.platformPostId).toMatch(/^publish:/);
    expect(done.url).toBeNull();
    expect(fake.publication(done.platformPostId)).toMatchObject({ privacy: "SELF_ONLY" });
  });

  test("audited app, no privacy level chosen by the user: refused before any call (no public default)", async () => {
    const a = account("tiktok");
    const err = await audited.tiktok!.publish(a, { text: "x", media: [file("jpeg")] }).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.message).toContain("chosen by the user");
    expect(calls(a)).toEqual([]);
  });

  test("an unaudited app asked for PUBLIC_TO_EVERYONE: refused before any call; the fake refuses it as TikTok does", async () => {
    const a = account("tiktok");
    const err = await fails(a, {
      text: "x",
      media: [file("jpeg")],
      tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE" },
    });
    expect(err.message).toContain("SELF_ONLY only");
    expect(calls(a)).toEqual([]);
    // An adapter configured as audited while TikTok has not audited the app: TikTok's own refusal.
    const b = account("tiktok");
    const refused = await audited
      .tiktok!.publish(b, {
        text: "x",
        media: [file("jpeg")],
        tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE" },
      })
      .catch((e) => e);
    expect(refused.message).toContain("unaudited_client_can_only_post_to_private_accounts");
  });

  test("an audited app: the level the user chose among creator_info's options is used; one it does not allow is refused", async () => {
    fake.setTikTokAudited(true);
    try {
      const a = account("tiktok");
      fake.setTikTokPrivacy(a.accessToken, ["FOLLOWER_OF_CREATOR", "SELF_ONLY"]);
      const done = await audited.tiktok!.publish(a, {
        text: "x",
        media: [file("jpeg")],
        tiktok: { privacyLevel: "FOLLOWER_OF_CREATOR" },
      });
      expect(fake.publication(done.platformPostId)?.privacy).toBe("FOLLOWER_OF_CREATOR");
      const no = await audited
        .tiktok!.publish(a, {
          text: "x",
          media: [file("jpeg")],
          tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE" },
        })
        .catch((e) => e);
      expect(no.message).toContain("does not allow the privacy level PUBLIC_TO_EVERYONE");
      expect(calls(a).filter((c) => c.includes("init"))).toHaveLength(1);
    } finally {
      fake.setTikTokAudited(false);
    }
  });

  test("a video not under a verified prefix is uploaded (FILE_UPLOAD, PUT with Content-Range); under one it is pulled", async () => {
    const a = account("tiktok");
    const elsewhere = createPlatformAdapters({
      config: { ...config, social: { ...config.social, tiktokVerifiedUrlPrefixes: [] } },
      clock: systemClock,
    });
    const up = await elsewhere.tiktok!.publish(a, { text: "clip", media: [file("mp4")], tiktok: SELF });
    // Private (SELF_ONLY): published without a public URL (issue 33).
    expect(up.url).toBeNull();
    expect(fake.publication(up.platformPostId)?.media).toEqual([{ contentType: "video/mp4", size: 300 }]);
    expect(fake.requests.some((r) => r.method === "PUT" && r.path.startsWith("/tiktok-upload/"))).toBe(true);
    const b = account("tiktok");
    const pulled = await publish(b, { text: "clip", media: [file("mp4")], tiktok: SELF });
    expect(fake.publication(pulled.platformPostId)?.media).toEqual([{ contentType: "video/mp4", size: 300 }]);
    expect(calls(b)).toContain("POST /post/publish/video/init/");
  });

  test("the FILE_UPLOAD plan: whole up to 64 MB, else 10 MB chunks with the rest in the last; the fake refuses a plan that disagrees", async () => {
    expect(tiktokChunks(300)).toEqual({ chunkSize: 300, count: 1 });
    expect(tiktokChunks(64 * 1024 * 1024)).toEqual({ chunkSize: 64 * 1024 * 1024, count: 1 });
    expect(tiktokChunks(105 * 1024 * 1024)).toEqual({ chunkSize: 10 * 1024 * 1024, count: 10 });
    const a = account("tiktok");
    const res = await fetch(`${fake.bases.tiktok}/post/publish/video/init/`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${a.accessToken}`,
        "content-type": "application/json; charset=UTF-8",
      },
      body: JSON.stringify({
        post_info: { title: "t", privacy_level: "SELF_ONLY" },
        source_info: {
          source: "FILE_UPLOAD",
          video_size: 100 * 1024 * 1024,
          chunk_size: 1024,
          total_chunk_count: 3,
        },
      }),
    });
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_params");
  });

  test("36 photos, a PNG, or text only: refused before any call", async () => {
    const a = account("tiktok");
    expect((await fails(a, { text: "x", media: files(36), tiktok: SELF })).message).toContain("at most 35");
    expect((await fails(a, { text: "x", media: [file("png")], tiktok: SELF })).message).toContain(
      "image/png",
    );
    expect((await fails(a, { text: "x", media: [], tiktok: SELF })).message).toContain("needs at least one");
    expect(calls(a)).toEqual([]);
  });

  test("a file TikTok cannot use (PNG bytes behind a JPEG type): FAILED with its fail_reason", async () => {
    const a = account("tiktok");
    expect((await fails(a, { text: "x", media: [file("png", "jpeg")], tiktok: SELF })).message).toContain(
      "file_format_check_failed",
    );
  });

  test("photos outside the verified prefixes: refused before any call; a prefix the setting lists but TikTok did not verify: url_ownership_unverified", async () => {
    const a = account("tiktok");
    const elsewhere = { ...file("jpeg"), url: "https://unverified.example/a.jpg" };
    expect((await fails(a, { text: "x", media: [elsewhere], tiktok: SELF })).message).toContain(
      "SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES",
    );
    expect(calls(a)).toEqual([]);
    const claims = createPlatformAdapters({
      config: {
        ...config,
        social: { ...config.social, tiktokVerifiedUrlPrefixes: ["https://unverified.example/"] },
      },
      clock: systemClock,
    });
    const err = await claims
      .tiktok!.publish(a, { text: "x", media: [elsewhere], tiktok: SELF })
      .catch((e) => e);
    expect(err.message).toContain("url_ownership_unverified");
  });

  test("the fake refuses a privacy level the creator does not allow and an empty photo list", async () => {
    const a = account("tiktok");
    fake.setTikTokPrivacy(a.accessToken, ["SELF_ONLY"]);
    const send = (body: unknown) =>
      fetch(`${fake.bases.tiktok}/post/publish/content/init/`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${a.accessToken}`,
          "content-type": "application/json; charset=UTF-8",
        },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error: { code: string } } }));
    const base = {
      post_mode: "DIRECT_POST",
      media_type: "PHOTO",
      source_info: { source: "PULL_FROM_URL", photo_cover_index: 0, photo_images: [file("jpeg").url] },
    };
    const wrongPrivacy = await send({
      ...base,
      post_info: { title: "t", privacy_level: "PUBLIC_TO_EVERYONE" },
    });
    expect(wrongPrivacy.body.error.code).toBe("privacy_level_option_mismatch");
    const empty = await send({
      ...base,
      post_info: { title: "t", privacy_level: "SELF_ONLY" },
      source_info: { ...base.source_info, photo_images: [] },
    });
    expect([empty.status, empty.body.error.code]).toEqual([400, "invalid_params"]);
  });
});

describe("x: media upload then POST /2/tweets", () => {
  test("up to 4 images: each uploaded, then the post with media.media_ids", async () => {
    const a = account("x");
    const done = await publish(a, {
      text: "four",
      media: [file("jpeg"), file("png"), file("jpeg"), file("webp")],
    });
    expect(fake.publication(done.platformPostId)?.media).toHaveLength(4);
    expect(calls(a).filter((c) => c === "POST /media/upload")).toHaveLength(4);
  });

  test("one video: initialize, append, finalize, status polled until succeeded", async () => {
    fake.setProcessingChecks(2);
    const a = account("x");
    const done = await publish(a, { text: "", media: [file("mp4")] });
    expect(fake.publication(done.platformPostId)?.media).toEqual([{ contentType: "video/mp4", size: 300 }]);
    expect(calls(a).filter((c) => c === "GET /media/upload")).toHaveLength(3);
  });

  test("5 images, or a video with an image: refused before any call; the fake refuses 5 media ids", async () => {
    const a = account("x");
    expect((await fails(a, { text: "five", media: files(5) })).message).toContain("at most 4");
    expect((await fails(a, { text: "mix", media: [file("mp4"), file("jpeg")] })).message).toContain(
      "one video",
    );
    expect(calls(a)).toEqual([]);
    const five = await fetch(`${fake.bases.x}/tweets`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "t", media: { media_ids: ["1", "2", "3", "4", "5"] } }),
    });
    expect(five.status).toBe(400);
  });

  test("the fake refuses text over 280 weighted characters and counts a URL as 23", async () => {
    const a = account("x");
    expect((await fails(a, { text: "a".repeat(281), media: [] })).message).toContain("280");
    expect((await fails(a, { text: "界".repeat(141), media: [] })).message).toContain("280");
    const linked = `${"a".repeat(256)} https://example.com/${"p/".repeat(100)}`;
    const done = await publish(a, { text: linked, media: [] });
    expect(fake.publishedText(done.platformPostId)).toBe(linked);
  });
});

describe("linkedin: versioned REST and the Images API", () => {
  test("images: initializeUpload, PUT of the bytes, then the post with the image URN (multiImage for 2+)", async () => {
    const a = account("linkedin");
    const one = await publish(a, { text: "one", media: [file("png")] });
    expect(fake.publication(one.platformPostId)?.media).toEqual([{ contentType: "image/png", size: 300 }]);
    const three = await publish(a, { text: "three", media: files(3) });
    expect(fake.publication(three.platformPostId)?.media).toHaveLength(3);
    expect(fake.requests.filter((r) => r.path.startsWith("/upload/") && r.method === "PUT")).not.toHaveLength(
      0,
    );
  });

  test("every call carries the configured LinkedIn-Version; a sunset version fails as 'API version sunset'", async () => {
    const old = createPlatformAdapters({
      config: { ...config, social: { poll, linkedinVersion: "202411" } },
      clock: systemClock,
    });
    const err = (await old
      .linkedin!.publish(account("linkedin"), { text: "hi", media: [] })
      .catch((e) => e)) as PlatformError;
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.status).toBe(426);
    expect(err.message).toContain("API version sunset");
    expect(err.message).toContain("LINKEDIN_API_VERSION");
  });

  test("a video through the Videos API: initializeUpload, 4 MB parts PUT with their ETags, finalizeUpload, polled until AVAILABLE, then the post with the video URN", async () => {
    const a = account("linkedin");
    // 9 MB: three parts (4 MB, 4 MB, the rest), as the upload instructions say.
    const bytes = sampleVideo(9 * 1024 * 1024);
    const done = await publish(a, {
      text: "a clip",
      media: [
        { kind: "video", contentType: "video/mp4", size: bytes.byteLength, url: "", read: async () => bytes },
      ],
    });
    expect(fake.publication(done.platformPostId)?.media).toEqual([
      { contentType: "video/mp4", size: bytes.byteLength },
    ]);
    const seen = calls(a).map((c) => c.replace(/urn%3Ali%3Avideo%3A\w+/, "<urn>"));
    expect(seen.slice(0, 6)).toEqual([
      "POST /rest/videos",
      "PUT /upload-video/<urn>/0",
      "PUT /upload-video/<urn>/1",
      "PUT /upload-video/<urn>/2",
      "POST /rest/videos",
      "GET /rest/videos/<urn>",
    ]);
    expect(seen.at(-1)).toBe("POST /rest/posts");
  });

  test("a video: under LinkedIn's 75 KB minimum the fake refuses it (422), a video with an image is refused before any call, bytes that are not an MP4 fail processing", async () => {
    const a = account("linkedin");
    const small = await fails(a, { text: "v", media: [file("mp4")] });
    expect(small.message).toContain("75 KB");
    const b = account("linkedin");
    expect((await fails(b, { text: "v", media: [file("mp4"), file("jpeg")] })).message).toContain(
      "one video alone",
    );
    expect(calls(b)).toEqual([]);
    const junk = new Uint8Array(80 * 1024).fill(1);
    const c = account("linkedin");
    const failed = await fails(c, {
      text: "v",
      media: [
        { kind: "video", contentType: "video/mp4", size: junk.byteLength, url: "", read: async () => junk },
      ],
    });
    expect(failed.message).toContain("PROCESSING_FAILED");
    expect(calls(c)).not.toContain("POST /rest/posts");
  });

  test("the fake refuses a missing version and an image never uploaded", async () => {
    const a = account("linkedin");
    const noVersion = await fetch(`${fake.bases.linkedin}/rest/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.accessToken}` },
      body: "{}",
    });
    expect(noVersion.status).toBe(400);
    const ghost = await fetch(`${fake.bases.linkedin}/rest/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.accessToken}`, "linkedin-version": "202607" },
      body: JSON.stringify({
        author: "urn:li:person:x",
        commentary: "c",
        content: { media: { id: "urn:li:image:nope" } },
      }),
    });
    expect(ghost.status).toBe(422);
  });
});

describe("reddit: self posts and image posts through the upload lease", () => {
  test("one image: a lease, the file posted with the lease's fields, kind=image, the post found on the profile", async () => {
    const a = account("reddit");
    const done = await publish(a, { text: "A picture\nmore words", media: [file("jpeg")] });
    expect(done.platformPostId).toStartWith("t3_");
    expect(fake.publication(done.platformPostId)).toEqual({
      platform: "reddit",
      text: "A picture",
      media: [{ contentType: "image/jpeg", size: 300 }],
    });
    expect(calls(a)).toContain("POST /api/media/asset.json");
  });

  test("a video: leases for the MP4 and its poster, both uploaded, kind=video with url and video_poster_url, the post found on the profile; without a poster refused before any call", async () => {
    const a = account("reddit");
    const poster = sampleImage("jpeg", { size: 200 });
    const video = {
      ...file("mp4"),
      poster: { contentType: "image/jpeg" as const, read: async () => poster },
    };
    const done = await publish(a, { text: "A clip", media: [video] });
    expect(done.platformPostId).toStartWith("t3_");
    expect(fake.publication(done.platformPostId)?.media).toEqual([{ contentType: "video/mp4", size: 300 }]);
    // (The uploads to the lease's storage carry no token; the fake checked each one's bytes by type.)
    expect(calls(a).slice(0, 3)).toEqual([
      "POST /api/media/asset.json",
      "POST /api/media/asset.json",
      "POST /api/submit",
    ]);
    const b = account("reddit");
    expect((await fails(b, { text: "no poster", media: [file("mp4")] })).message).toContain("poster");
    expect(calls(b)).toEqual([]);
    // The fake: kind=video without an uploaded poster is refused as Reddit's submit refuses a bad url.
    const lease = await fetch(`${fake.bases.reddit}/api/submit`, {
      method: "POST",
      headers: {
        authorization: `bearer ${b.accessToken}`,
        "user-agent": "server:app:1.0 (by /u/tester)",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ api_type: "json", sr: "u_x", title: "t", kind: "video", url: "x" }),
    });
    expect(((await lease.json()) as any).json.errors[0][0]).toBe("NO_URL");
  });

  test("two images or a WebP: refused before any call; the fake refuses an upload without the lease's fields", async () => {
    const a = account("reddit");
    expect((await fails(a, { text: "two", media: files(2) })).message).toContain("at most 1 image");
    expect((await fails(a, { text: "webp", media: [file("webp")] })).message).toContain("image/webp");
    expect(calls(a)).toEqual([]);
    const form = new FormData();
    form.append("key", "rte_images/1/x.jpg");
    form.append("file", new Blob([sampleImage("jpeg")]), "x.jpg");
    const upload = await fetch(`${fake.bases.reddit}/media-upload`, { method: "POST", body: form });
    expect(upload.status).toBe(403);
  });
});
