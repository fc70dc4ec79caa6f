import { afterAll, describe, expect, test } from "bun:test";
import { fixedClock } from "@site/config";
import {
  type AdapterAccount,
  PlatformError,
  type PublishInput,
  type SocialPlatform,
} from "@site/domain/social";
import { sampleImage } from "@site/domain/testing";
import { startFakePlatforms } from "../testing/fake_platforms.ts";
import { createPlatformAdapters } from "./adapters.ts";

const fake = startFakePlatforms();
// A clock far from the real time: a publication dated by it was dated by the injected clock.
const clock = fixedClock(new Date("2031-05-06T07:08:09.000Z"));
const adapters = createPlatformAdapters({
  config: {
    socialApiBase: fake.bases,
    social: {
      linkedinVersion: "202607",
      poll: { intervalMs: 5, maxAttempts: 10 },
      tiktokVerifiedUrlPrefixes: [fake.mediaPrefix],
    },
  },
  clock,
});
/** The same adapters with TikTok metrics read (SOCIAL_TIKTOK_READ_METRICS, decision 1032). */
const reading_ = createPlatformAdapters({
  config: {
    socialApiBase: fake.bases,
    social: {
      linkedinVersion: "202607",
      poll: { intervalMs: 5, maxAttempts: 10 },
      tiktokVerifiedUrlPrefixes: [fake.mediaPrefix],
      tiktokReadMetrics: true,
      // Metrics are read of public posts, which only an audited app makes (a private post has no id).
      tiktokAudited: true,
    },
  },
  clock,
});
afterAll(() => fake.close());

/** A post each platform accepts: a JPEG where media is required (Instagram, TikTok), else text. */
function post(platform: SocialPlatform, text: string, privacyLevel = "SELF_ONLY"): PublishInput {
  if (platform !== "instagram" && platform !== "tiktok") return { text, media: [] };
  const bytes = sampleImage("jpeg", { size: 256 });
  const url = fake.host(bytes, "image/jpeg");
  return {
    text,
    media: [{ kind: "image", contentType: "image/jpeg", size: 256, url, read: async () => bytes }],
    ...(platform === "tiktok" ? { tiktok: { privacyLevel } } : {}),
  };
}

function account(platform: SocialPlatform, o: Partial<AdapterAccount> = {}): AdapterAccount {
  return {
    platform,
    accountId: `acct-${platform}`,
    displayName: "Acme",
    accessToken: `tok-${platform}-${Math.random().toString(36).slice(2)}`,
    permissions: [],
    tier: null,
    ...o,
  };
}

async function publishAndRead(platform: SocialPlatform, a: AdapterAccount, metrics = {}, set = adapters) {
  const adapter = set[platform]!;
  // The reading set is the audited app's: its TikTok posts are public, as TikTok lets an audited app post.
  const audited = set === reading_ && platform === "tiktok";
  fake.setTikTokAudited(audited);
  const published = await adapter
    .publish(a, post(platform, "Hello from the test", audited ? "PUBLIC_TO_EVERYONE" : "SELF_ONLY"))
    .finally(() => fake.setTikTokAudited(false));
  fake.setMetrics(published.platformPostId, metrics);
  const reading = await adapter.readMetrics(a, { ...published });
  return { published, reading };
}

describe("instagram (photo-sharing)", () => {
  test("with the insights permission: views, likes, comments, saves, shares, and reach in extra", async () => {
    const a = account("instagram", { permissions: ["instagram_basic", "instagram_manage_insights"] });
    const { published, reading } = await publishAndRead("instagram", a, {
      views: 900,
      reach: 700,
      likes: 31,
      comments: 4,
      saves: 0,
      shares: 2,
    });
    expect(published.url).toStartWith("https://www.instagram.com/p/");
    expect(Math.abs(published.publishedAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(reading).toEqual({
      views: 900,
      likes: 31,
      comments: 4,
      shares: 2,
      saves: 0,
      extra: { reach: 700 },
    });
    const calls = fake.requests.filter((r) => r.token === a.accessToken).map((r) => `${r.method} ${r.path}`);
    expect(calls.some((c) => c.startsWith("POST /v25.0/acct-instagram/media?"))).toBe(true);
    expect(calls.some((c) => c.includes("/insights?metric=views%2Creach%2Csaved%2Cshares"))).toBe(true);
  });

  test("an account connected without the insights permission: views, reach, saves, shares are null, never 0", async () => {
    const a = account("instagram", { permissions: ["instagram_basic"] });
    const { reading } = await publishAndRead("instagram", a, { likes: 12, comments: 0 });
    expect(reading.likes).toBe(12);
    expect(reading.comments).toBe(0);
    expect([reading.views, reading.saves, reading.shares, reading.extra.reach]).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(reading.extra.unavailable).toEqual({
      views: "permission_missing",
      shares: "permission_missing",
      saves: "permission_missing",
      reach: "permission_missing",
    });
    expect(fake.requests.some((r) => r.token === a.accessToken && r.path.includes("/insights"))).toBe(false);
  });

  test("a token the platform refuses insights to (Graph error #10): null with permission_missing", async () => {
    const a = account("instagram", { permissions: ["instagram_manage_insights"] });
    fake.deny(a.accessToken, "instagram_manage_insights");
    const { reading } = await publishAndRead("instagram", a);
    expect(reading.views).toBeNull();
    expect(reading.likes).toBe(40);
    expect((reading.extra.unavailable as Record<string, string>).views).toBe("permission_missing");
  });

  test("an expired token (Graph error #190) is an auth failure", async () => {
    const a = account("instagram");
    const published = await adapters.instagram!.publish(a, post("instagram", "x"));
    fake.expire(a.accessToken);
    const err = await adapters.instagram!.readMetrics(a, published).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.kind).toBe("auth");
  });
});

describe("threads (text-thread)", () => {
  test("replies map to comments, reposts to shares; quotes and Threads' shares stay in extra", async () => {
    const a = account("threads", { permissions: ["threads_basic", "threads_manage_insights"] });
    const { reading } = await publishAndRead("threads", a, {
      views: 300,
      likes: 20,
      comments: 5,
      reposts: 3,
      quotes: 1,
      shares: 9,
    });
    expect(reading).toEqual({
      views: 300,
      likes: 20,
      comments: 5,
      shares: 3,
      saves: null,
      extra: { quotes: 1, platformShares: 9, unavailable: { saves: "not_exposed" } },
    });
  });

  test("without threads_manage_insights every metric is null with its reason", async () => {
    const a = account("threads", { permissions: ["threads_basic"] });
    const { reading } = await publishAndRead("threads", a);
    expect([reading.views, reading.likes, reading.comments, reading.shares, reading.saves]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(reading.extra.unavailable).toMatchObject({
      views: "permission_missing",
      likes: "permission_missing",
      comments: "permission_missing",
      shares: "permission_missing",
      saves: "not_exposed",
      quotes: "permission_missing",
    });
  });

  test("the platform's permission error (403, code 10) is a permission failure", async () => {
    const a = account("threads", { permissions: ["threads_manage_insights"] });
    fake.deny(a.accessToken, "threads_manage_insights");
    const published = await adapters.threads!.publish(a, post("threads", "x"));
    const err = await adapters.threads!.readMetrics(a, published).catch((e) => e);
    expect(err.kind).toBe("permission");
  });
});

describe("x (microblogging)", () => {
  test("paid tier: impressions→views, replies→comments, retweets→shares, bookmarks→saves, quotes in extra", async () => {
    const a = account("x", { tier: "basic" });
    const { published, reading } = await publishAndRead("x", a, {
      views: 5000,
      likes: 70,
      comments: 8,
      reposts: 11,
      bookmarks: 6,
      quotes: 2,
    });
    expect(published.url).toBe(`https://x.com/i/web/status/${published.platformPostId}`);
    expect(reading).toEqual({
      views: 5000,
      likes: 70,
      comments: 8,
      shares: 11,
      saves: 6,
      extra: { quotes: 2 },
    });
    const read = fake.requests.find((r) => r.token === a.accessToken && r.method === "GET");
    expect(read?.path).toBe(`/tweets/${published.platformPostId}?tweet.fields=public_metrics`);
  });

  test("free tier: every metric is null with paid_tier_required, and the API is not even asked", async () => {
    const a = account("x", { tier: "free" });
    const { reading } = await publishAndRead("x", a);
    expect([reading.views, reading.likes, reading.comments, reading.shares, reading.saves]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(reading.extra.unavailable).toMatchObject({
      views: "paid_tier_required",
      quotes: "paid_tier_required",
    });
    expect(fake.requests.some((r) => r.token === a.accessToken && r.method === "GET")).toBe(false);
  });

  test("a paid tier the platform answers 403 client-not-enrolled: all null with paid_tier_required", async () => {
    const a = account("x", { tier: "basic" });
    fake.freeTier(a.accessToken);
    const { reading } = await publishAndRead("x", a);
    expect(reading.likes).toBeNull();
    expect((reading.extra.unavailable as Record<string, string>).likes).toBe("paid_tier_required");
  });

  test("429 carries the wait from x-rate-limit-reset", async () => {
    const a = account("x", { tier: "pro" });
    const published = await adapters.x!.publish(a, post("x", "x"));
    fake.failNext("x", 1, 429, 3);
    const err = await adapters.x!.readMetrics(a, published).catch((e) => e);
    expect(err.kind).toBe("rate_limited");
    expect(err.retryAfterMs).toBeGreaterThan(1000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(4000);
  });
});

describe("linkedin (professional network)", () => {
  test("likes and comments from socialActions; no views, shares or saves", async () => {
    const a = account("linkedin");
    const { published, reading } = await publishAndRead("linkedin", a, { likes: 17, comments: 3 });
    expect(published.platformPostId).toStartWith("urn:li:share:");
    expect(published.url).toBe(`https://www.linkedin.com/feed/update/${published.platformPostId}/`);
    expect(reading).toEqual({
      views: null,
      likes: 17,
      comments: 3,
      shares: null,
      saves: null,
      extra: { unavailable: { views: "not_exposed", shares: "not_exposed", saves: "not_exposed" } },
    });
  });

  test("ACCESS_DENIED (403) is a permission failure", async () => {
    const a = account("linkedin");
    fake.deny(a.accessToken, "r_member_social");
    const published = await adapters.linkedin!.publish(a, post("linkedin", "x"));
    expect((await adapters.linkedin!.readMetrics(a, published).catch((e) => e)).kind).toBe("permission");
  });
});

describe("reddit (forum)", () => {
  test("score→likes, num_comments→comments, upvote ratio in extra, always available", async () => {
    const a = account("reddit");
    const { published, reading } = await publishAndRead("reddit", a, {
      score: 120,
      comments: 14,
      upvoteRatio: 0.87,
    });
    expect(published.platformPostId).toStartWith("t3_");
    expect(published.url).toContain("/r/u_acct-reddit/comments/");
    expect(reading).toEqual({
      views: null,
      likes: 120,
      comments: 14,
      shares: null,
      saves: null,
      extra: {
        upvoteRatio: 0.87,
        unavailable: { views: "not_exposed", shares: "not_exposed", saves: "not_exposed" },
      },
    });
    const read = fake.requests.find((r) => r.token === a.accessToken && r.method === "GET");
    expect(read?.path).toBe(`/api/info?id=${published.platformPostId}&raw_json=1`);
  });

  test("an expired token (401) is an auth failure", async () => {
    const a = account("reddit");
    const published = await adapters.reddit!.publish(a, post("reddit", "x"));
    fake.expire(a.accessToken);
    expect((await adapters.reddit!.readMetrics(a, published).catch((e) => e)).kind).toBe("auth");
  });
});

describe("tiktok (the further platform: null metrics unless SOCIAL_TIKTOK_READ_METRICS)", () => {
  test("by default (spec: no readable metrics) every metric is null, not_exposed, and /video/query/ is never called, even for a token with video.list", async () => {
    const a = account("tiktok", { permissions: ["user.info.basic", "video.publish", "video.list"] });
    const { reading: r } = await publishAndRead("tiktok", a, { views: 321, likes: 9 });
    expect(r).toEqual({
      views: null,
      likes: null,
      comments: null,
      shares: null,
      saves: null,
      extra: {
        unavailable: {
          views: "not_exposed",
          likes: "not_exposed",
          comments: "not_exposed",
          shares: "not_exposed",
          saves: "not_exposed",
        },
      },
    });
    expect(fake.requests.some((r) => r.token === a.accessToken && r.path.startsWith("/video/query"))).toBe(
      false,
    );
  });

  test("with SOCIAL_TIKTOK_READ_METRICS and video.list, views, likes, comments and shares come from /video/query/ (saves not exposed)", async () => {
    const a = account("tiktok", { permissions: ["user.info.basic", "video.publish", "video.list"] });
    const { published, reading } = await publishAndRead(
      "tiktok",
      a,
      { views: 321, likes: 9, comments: 2, shares: 1 },
      reading_,
    );
    // 19 digits like TikTok's ids: beyond 2^53, read exactly from the raw answer.
    expect(published.platformPostId).toMatch(/^7\d{18}$/);
    expect(published.url).toEndWith(`/photo/${published.platformPostId}`);
    expect(reading).toEqual({
      views: 321,
      likes: 9,
      comments: 2,
      shares: 1,
      saves: null,
      extra: { unavailable: { saves: "not_exposed" } },
    });
    const calls = fake.requests.filter((r) => r.token === a.accessToken).map((r) => r.path.split("?")[0]);
    expect(calls).toEqual([
      "/post/publish/creator_info/query/",
      "/post/publish/content/init/",
      "/post/publish/status/fetch/",
      "/video/query/",
    ]);
  });

  test("with SOCIAL_TIKTOK_READ_METRICS, an account connected without video.list: every metric null (permission_missing), no call", async () => {
    const a = account("tiktok", { permissions: ["user.info.basic", "video.publish"] });
    const { reading } = await publishAndRead("tiktok", a, {}, reading_);
    expect(reading.extra.unavailable).toMatchObject({
      views: "permission_missing",
      likes: "permission_missing",
    });
    expect(fake.requests.some((r) => r.token === a.accessToken && r.path.startsWith("/video/query"))).toBe(
      false,
    );
  });

  test("the fake refuses /video/query/ to a token issued without video.list (scope_not_authorized)", async () => {
    const t = fake.issueTokens("tiktok", ["user.info.basic", "video.publish"]);
    const a = account("tiktok", { accessToken: t.accessToken, permissions: ["video.list"] });
    fake.setTikTokAudited(true);
    const published = await reading_
      .tiktok!.publish(a, post("tiktok", "x", "PUBLIC_TO_EVERYONE"))
      .finally(() => fake.setTikTokAudited(false));
    const err = await reading_.tiktok!.readMetrics(a, published).catch((e) => e);
    expect(err.kind).toBe("permission");
    expect(err.message).toContain("scope_not_authorized");
  });

  test("unaudited app: a post without a privacy choice goes out SELF_ONLY (decision 1031); an audited app refuses it before any call", async () => {
    const a = account("tiktok");
    const { tiktok: _, ...unchosen } = post("tiktok", "no choice");
    const published = await adapters.tiktok!.publish(a, unchosen);
    expect(fake.publication(published.platformPostId)?.privacy).toBe("SELF_ONLY");
    const audited = createPlatformAdapters({
      config: {
        socialApiBase: fake.bases,
        social: {
          linkedinVersion: "202607",
          poll: { intervalMs: 5, maxAttempts: 10 },
          tiktokAudited: true,
          tiktokVerifiedUrlPrefixes: [fake.mediaPrefix],
        },
      },
      clock,
    });
    const b = account("tiktok");
    const err = await audited.tiktok!.publish(b, unchosen).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.message).toContain("platformOptions.tiktok.privacyLevel");
    expect(fake.requests.some((r) => r.token === b.accessToken)).toBe(false);
  });

  test("an invalid token fails publishing with an auth error", async () => {
    const a = account("tiktok");
    fake.expire(a.accessToken);
    expect((await adapters.tiktok!.publish(a, post("tiktok", "x")).catch((e) => e)).kind).toBe("auth");
  });
});

describe("publication time", () => {
  test.each(["x", "linkedin", "reddit", "tiktok"] as const)(
    "%s: a platform that does not date the post gets the injected clock's time",
    async (platform) => {
      const a = account(platform, { tier: platform === "x" ? "basic" : null });
      const published = await adapters[platform]!.publish(a, post(platform, "dated by the clock"));
      expect(published.publishedAt.toISOString()).toBe("2031-05-06T07:08:09.000Z");
    },
  );

  test.each(["instagram", "threads"] as const)(
    "%s: the time the platform reports wins over the clock",
    async (platform) => {
      const published = await adapters[platform]!.publish(
        account(platform),
        post(platform, "dated by the platform"),
      );
      expect(Math.abs(published.publishedAt.getTime() - Date.now())).toBeLessThan(60_000);
    },
  );
});
