import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { systemClock } from "@site/config";
import {
  type AdapterAccount,
  PlatformError,
  type PublishMedia,
  redditRatelimitMs,
  retryTime,
  type SocialPlatform,
} from "@site/domain/social";
import { sampleVideo } from "@site/domain/testing";
import { startFakePlatforms } from "../testing/fake_platforms.ts";
import { createPlatformAdapters } from "./adapters.ts";

// Issue 33: the waits the providers state become one typed refusal (PlatformError `rate_limited`, with
// `retryAfterMs` and, where the platform named the moment, `retryAt`), never a permanent one; X's
// check_after_secs is honoured while a video is processed; an unaudited TikTok post (private) ends at
// PUBLISH_COMPLETE without polling for a public id it never gets. Each rule is the strict fake's first.

const fake = startFakePlatforms();
const poll = { intervalMs: 5, maxAttempts: 10 };
const config = {
  socialApiBase: fake.bases,
  social: { poll, linkedinVersion: "202607", tiktokVerifiedUrlPrefixes: [fake.mediaPrefix] },
};
const adapters = createPlatformAdapters({ config, clock: systemClock });
afterAll(() => fake.close());
afterEach(() => {
  fake.setProcessingChecks(0);
  fake.setXProcessingSeconds(0);
  fake.redditRatelimitNext(0, "");
});

function account(platform: SocialPlatform): AdapterAccount {
  return {
    platform,
    accountId: `acct${Math.random().toString(36).slice(2, 8)}`,
    displayName: "Acme",
    accessToken: `tok-${platform}-${Math.random().toString(36).slice(2)}`,
    permissions: [],
    tier: "basic",
  };
}
function video(): PublishMedia {
  const bytes = sampleVideo(4096);
  return {
    kind: "video",
    contentType: "video/mp4",
    size: bytes.byteLength,
    url: fake.host(bytes, "video/mp4"),
    read: async () => bytes,
  };
}
const calls = (a: AdapterAccount) =>
  fake.requests.filter((r) => r.token === a.accessToken).map((r) => `${r.method} ${r.path.split("?")[0]}`);
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("published, but should have been refused");
    },
    (e) => e as PlatformError,
  );

describe("Reddit: RATELIMIT inside a 200, read as PRAW reads it", () => {
  test("PRAW's regex: minutes ×60, seconds as said, milliseconds as 0, plus one second; no number, no wait", () => {
    expect(redditRatelimitMs("you are doing that too much. try again in 9 minutes.")).toBe(541_000);
    expect(
      redditRatelimitMs(
        "Looks like you've been doing that a lot. Take a break for 3 seconds before trying again.",
      ),
    ).toBe(4_000);
    expect(redditRatelimitMs("Take a break for 1 minute")).toBe(61_000);
    expect(redditRatelimitMs("try again in 500 milliseconds")).toBe(1_000);
    expect(redditRatelimitMs("you are doing that too much")).toBeNull();
  });

  test("the fake's RATELIMIT answer is a rate-limited refusal with the stated wait and Reddit's words, not a permanent one; nothing is posted", async () => {
    const a = account("reddit");
    fake.redditRatelimitNext(1, "you are doing that too much. try again in 9 minutes.");
    const err = await refusal(adapters.reddit!.publish(a, { text: "hello", media: [] }));
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBe(541_000);
    expect(err.message).toContain("you are doing that too much. try again in 9 minutes.");
    const at = new Date("2026-11-28T10:00:00Z");
    expect(retryTime(err, at)?.toISOString()).toBe("2026-11-28T10:09:01.000Z");
    // The next try (the wait over) posts once.
    const done = await adapters.reddit!.publish(a, { text: "hello", media: [] });
    expect(fake.publishedText(done.platformPostId)).toBe("hello");
    expect(calls(a).filter((c) => c === "POST /api/submit")).toHaveLength(2);
  });
});

describe("X: the window's reset, the 24-hour cap's reset, check_after_secs", () => {
  test("a 429 of the spent 24-hour cap retries at x-user-limit-24hour-reset, not at the 15-minute window's reset", async () => {
    const a = account("x");
    fake.xDailyLimitNext(1, 6 * 3600);
    const before = Date.now();
    const err = await refusal(adapters.x!.publish(a, { text: "daily", media: [] }));
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAt).toBeInstanceOf(Date);
    const wait = err.retryAt!.getTime() - before;
    expect(wait).toBeGreaterThan(6 * 3600_000 - 2_000);
    // The reset header counts whole seconds: up to a second past `before`, plus the call itself.
    expect(wait).toBeLessThanOrEqual(6 * 3600_000 + 2_000);
    expect(err.retryAfterMs).toBeGreaterThan(6 * 3600_000 - 2_000);
  });

  test("an ordinary 429 retries at x-rate-limit-reset, an absolute time", async () => {
    const a = account("x");
    fake.failNext("x", 1, 429, 30);
    const before = Date.now();
    const err = await refusal(adapters.x!.publish(a, { text: "window", media: [] }));
    expect(err.kind).toBe("rate_limited");
    const wait = err.retryAt!.getTime() - before;
    expect(wait).toBeGreaterThan(28_000);
    expect(wait).toBeLessThanOrEqual(31_000);
  });

  test("a video processed for 2 s: the status is checked when check_after_secs says, and the post goes out (5 ms polling would give up)", async () => {
    fake.setXProcessingSeconds(2);
    const a = account("x");
    const started = Date.now();
    const done = await adapters.x!.publish(a, { text: "processed", media: [video()] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(fake.publication(done.platformPostId)?.media).toEqual([{ contentType: "video/mp4", size: 4096 }]);
    const checks = calls(a).filter((c) => c === "GET /media/upload");
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks.length).toBeLessThanOrEqual(2);
  }, 15_000);
});

describe("TikTok: rate_limit_exceeded, and the unaudited app's private posts", () => {
  test("rate_limit_exceeded (429) waits one window of TikTok's 1-minute sliding limit, in TikTok's words", async () => {
    const a = account("tiktok");
    fake.failNext("tiktok", 1, 429);
    const err = await refusal(
      adapters.tiktok!.publish(a, {
        text: "limited",
        media: [video()],
        tiktok: { privacyLevel: "SELF_ONLY" },
      }),
    );
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBe(60_000);
    expect(err.message).toContain("rate_limit_exceeded");
  });

  test("an unaudited app's SELF_ONLY post is published without a public URL, saying why, once TikTok says PUBLISH_COMPLETE (no polling for a public id)", async () => {
    fake.setProcessingChecks(2);
    const a = account("tiktok");
    const done = await adapters.tiktok!.publish(a, {
      text: "private",
      media: [video()],
      tiktok: { privacyLevel: "SELF_ONLY" },
    });
    expect(done.url).toBeNull();
    expect(done.note).toContain("SELF_ONLY");
    expect(done.platformPostId).toMatch(/^publish:/);
    expect(fake.publication(done.platformPostId)?.privacy).toBe("SELF_ONLY");
    // Two "processing" answers, then PUBLISH_COMPLETE: three checks, not the 10 of the whole wait.
    expect(calls(a).filter((c) => c.endsWith("status/fetch/"))).toHaveLength(3);
  });
});
