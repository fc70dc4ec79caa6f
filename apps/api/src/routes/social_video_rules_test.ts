import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFfmpeg } from "@site/domain/screenshots";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Issue 33, "video rules per platform, before any upload": a video is checked against each target
// platform's documented rules (duration, dimensions, aspect ratio, frame rate, size) when the post is
// created → 400 VALIDATION_ERROR whose details name the platform and the rule, and no platform is asked
// anything. The videos are real H.264 MP4s made by FFmpeg; the strict fakes refuse the same videos late
// (after the upload), as the platforms do.

const ffmpeg = findFfmpeg(null);
const PLATFORMS = ["instagram", "threads", "x", "linkedin", "reddit", "tiktok"] as const;
let h: TestApp;
let fake: FakePlatforms;
let dir: string;

/** A real MP4 of `w`x`h` px, `seconds` long at `fps` (FFmpeg's test pattern, H.264 yuv420p). */
function mp4(w: number, hgt: number, seconds: number, fps = 30): Uint8Array {
  const out = join(dir, `${w}x${hgt}-${seconds}-${fps}.mp4`);
  const p = Bun.spawnSync([
    ffmpeg!,
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${w}x${hgt}:rate=${fps}`,
    "-t",
    String(seconds),
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    out,
  ]);
  if (p.exitCode !== 0) throw new Error(`ffmpeg: ${p.stderr.toString()}`);
  return new Uint8Array(readFileSync(out));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "video-rules-"));
  fake = startFakePlatforms();
  h = await buildTestApp({
    env: {
      ...fake.env,
      SOCIAL_POLL_INTERVAL_MS: "5",
      SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "http://127.0.0.1:3000/api/media/",
    },
  });
  fake.verifyTikTokUrlPrefix("http://127.0.0.1:3000/api/media/");
  fetchMediaFromApp(fake, h);
});
afterAll(async () => {
  fake?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, any>;

async function attempt(video: Uint8Array, platforms: readonly string[]) {
  const { key } = await h.seedOrg();
  const id = (await uploadSocialMedia(h, key, video, "video/mp4")).id;
  const accounts = await Promise.all(platforms.map((p) => connectSocialAccount(h, key, p)));
  const tokens = new Set(accounts.map((a) => a.id));
  const before = fake.requests.length;
  const res = await h.call("POST", "/api/v1/social/posts", {
    key,
    body: { content: "a clip", media: [id], accounts: accounts.map((a) => a.id) },
  });
  return { res, body: (await res.json()) as Json, asked: fake.requests.length - before, tokens };
}
const rulesOf = (details: Json[]) => details.map((d) => `${d.platform}:${d.rule}`).sort();

describe.skipIf(!ffmpeg)("video rules per platform, before any upload", () => {
  test("a 2 s clip to all six: 400 naming Instagram, TikTok and LinkedIn with the duration rule; nothing uploaded anywhere", async () => {
    const { res, body, asked } = await attempt(mp4(720, 1280, 2), PLATFORMS);
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("VALIDATION_ERROR");
    const rules = rulesOf(body.error.details);
    expect(rules).toContain("instagram:duration");
    expect(rules).toContain("tiktok:duration");
    expect(rules).toContain("linkedin:duration");
    expect(rules.filter((r) => /^(x|threads|reddit):/.test(r))).toEqual([]);
    for (const d of body.error.details) {
      expect(d.message).toStartWith(`${d.platform}: `);
      expect(d.reference).toStartWith("https://");
    }
    expect(body.error.message).toContain("nothing was published");
    expect(asked).toBe(0);
  }, 60_000);

  test("320 px wide to TikTok: the dimensions rule (at least 360 px)", async () => {
    const { res, body, asked } = await attempt(mp4(320, 568, 4), ["tiktok"]);
    expect(res.status).toBe(400);
    expect(rulesOf(body.error.details)).toEqual(["tiktok:dimensions"]);
    expect(body.error.details[0].message).toContain("360");
    expect(asked).toBe(0);
  }, 60_000);

  test("1:6 to X and LinkedIn: each one's aspect-ratio rule", async () => {
    const { res, body } = await attempt(mp4(200, 1200, 4), ["x", "linkedin"]);
    expect(res.status).toBe(400);
    const rules = rulesOf(body.error.details);
    expect(rules).toContain("x:aspect_ratio");
    expect(rules).toContain("linkedin:aspect_ratio");
  }, 60_000);

  test("12 fps to Instagram and Threads: the frame-rate rule (23–60)", async () => {
    const { res, body } = await attempt(mp4(540, 960, 4, 12), ["instagram", "threads"]);
    expect(res.status).toBe(400);
    expect(rulesOf(body.error.details)).toEqual(["instagram:frame_rate", "threads:frame_rate"]);
  }, 60_000);

  test("a 4 s 540x960 30 fps clip passes every platform and is published on all six", async () => {
    const { res, body } = await attempt(mp4(540, 960, 4), PLATFORMS);
    expect(res.status).toBe(201);
    expect(body.post.targets.map((t: Json) => [t.platform, t.status, t.error])).toEqual(
      PLATFORMS.map((p) => [p, "published", null]),
    );
  }, 60_000);
});
