import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "@site/config";
import { findFfmpeg } from "@site/domain/screenshots";
import type { AdapterAccount, PublishMedia, SocialPlatform } from "@site/domain/social";
import { startFakePlatforms } from "../testing/fake_platforms.ts";
import { createPlatformAdapters } from "./adapters.ts";

// Issue 33: the strict fakes learn the platforms' 3-second minimum first. A video under 3 s that reaches
// Instagram (Reels), TikTok or LinkedIn is refused late, once uploaded and processed, as the platforms
// do: that is why the service checks the rules before any upload (libs/domain/social/video_rules.ts).

const ffmpeg = findFfmpeg(null);
const fake = startFakePlatforms();
const dir = mkdtempSync(join(tmpdir(), "late-video-"));
const adapters = createPlatformAdapters({
  config: {
    socialApiBase: fake.bases,
    social: {
      poll: { intervalMs: 5, maxAttempts: 10 },
      linkedinVersion: "202607",
      tiktokVerifiedUrlPrefixes: [fake.mediaPrefix],
    },
  },
  clock: systemClock,
});
afterAll(() => {
  fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function clip(seconds: number): PublishMedia {
  const out = join(dir, `${seconds}.mp4`);
  const p = Bun.spawnSync([
    ffmpeg!,
    ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=540x960:rate=30", "-t", String(seconds)],
    ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", out],
  ]);
  if (p.exitCode !== 0) throw new Error(p.stderr.toString());
  const bytes = new Uint8Array(readFileSync(out));
  return {
    kind: "video",
    contentType: "video/mp4",
    size: bytes.byteLength,
    url: fake.host(bytes, "video/mp4"),
    read: async () => bytes,
  };
}
const account = (platform: SocialPlatform): AdapterAccount => ({
  platform,
  accountId: `acct${Math.random().toString(36).slice(2, 8)}`,
  displayName: "Acme",
  accessToken: `tok-${platform}-${Math.random().toString(36).slice(2)}`,
  permissions: [],
  tier: "basic",
});

describe.skipIf(!ffmpeg)("a video under 3 s is refused late by the fakes, as by the platforms", () => {
  test("Instagram's container ends in ERROR, TikTok's publish FAILED (duration_check_failed), LinkedIn's processing fails; a 4 s one goes out", async () => {
    const short = clip(2);
    const long = clip(4);
    const cases: [SocialPlatform, string][] = [
      ["instagram", "3 s minimum"],
      ["tiktok", "duration_check_failed"],
      ["linkedin", "PROCESSING_FAILED"],
    ];
    for (const [platform, words] of cases) {
      const input = { text: "short", media: [short], tiktok: { privacyLevel: "SELF_ONLY" } };
      const err = await adapters[platform]!.publish(account(platform), input).then(
        () => null,
        (e: Error) => e,
      );
      expect({ platform, message: err?.message ?? "published" }).toEqual({
        platform,
        message: expect.stringContaining(words),
      });
      const ok = await adapters[platform]!.publish(account(platform), { ...input, media: [long] });
      // The 4 s clip is on the platform, with the post's text.
      expect(fake.publishedText(ok.platformPostId)).toBe("short");
    }
  }, 60_000);
});
