import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey, createMember } from "@site/domain/core";
import { captureDueSnapshots, readyAccount } from "@site/domain/social";
import { sampleImage } from "@site/domain/testing";
import { createPlatformAdapters } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Issue 24 and 25 end to end through the API against the strict fakes: connect as each provider really
// answers (ids beyond 2^53 from /me, LinkedIn's restricted scopes, Reddit's history scope), the connect
// bound to the user who started it (decision 1016; the starting browser's cookie, decision 1030), redirect origins, and TikTok posts with the user's
// privacy level and consent (decision 1013). Each test failed on the code before the issue.

let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({
    env: {
      ...fake.env,
      ...fake.oauthEnv,
      SOCIAL_POLL_INTERVAL_MS: "5",
      SOCIAL_REDIRECT_ORIGINS: "https://app.example",
      SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "http://127.0.0.1:3000/api/media/",
    },
  });
  fake.verifyTikTokUrlPrefix("http://127.0.0.1:3000/api/media/");
  fetchMediaFromApp(fake, h);
});
afterAll(async () => {
  fake.close();
  await h.close();
});

type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;
const start = (key: string, platform: string, redirectUri?: string) =>
  h.call("POST", "/api/v1/social/accounts/connect", { key, body: { platform, redirectUri } });
async function consent(authorizeUrl: string): Promise<string> {
  const res = await fetch(authorizeUrl, { redirect: "manual" });
  expect(res.status).toBe(302);
  return res.headers.get("location")!;
}
/** The platform's redirect lands in a browser sending `cookie` (none: a browser that started nothing). */
const callback = (url: string, cookie?: string) => {
  const u = new URL(url);
  return h.app.handle(
    new Request(`http://localhost${u.pathname}${u.search}`, { headers: cookie ? { cookie } : {} }),
  );
};
/** The cookie (name=value) a connect answer sets in the browser that made the call. */
const cookieOf = (res: Response) => (res.headers.get("set-cookie") ?? "").split(";")[0]!;
const confirm = (key: string, state: string, token: string) =>
  h.call("POST", "/api/v1/social/accounts/connect/confirm", { key, body: { state, confirm: token } });
async function complete(key: string, platform: string): Promise<Json> {
  const started = await body(await start(key, platform));
  const back = await callback(await consent(started.authorizeUrl));
  expect(back.status).toBe(200);
  const { pending } = await body(back);
  const res = await confirm(key, pending.state, pending.confirm);
  expect(res.status).toBe(201);
  return (await body(res)).account;
}
/** A second member of the same organization, with a key of its own. */
async function secondMember(orgId: string) {
  const user = await createMember(h.ctx, {
    orgId,
    email: `${Math.random().toString(36).slice(2)}@example.test`,
    role: "owner",
  });
  return (await createApiKey(h.ctx, { orgId, userId: user.id, scopes: ["social:write"] })).key;
}

describe("redirectUri only on SOCIAL_REDIRECT_ORIGINS (issue 25)", () => {
  test("another origin is 400 VALIDATION_ERROR naming redirectUri; a listed one is accepted", async () => {
    const { key } = await h.seedOrg();
    for (const redirectUri of [
      "https://evil.example/steal",
      "https://app.example.evil.example/x",
      "http://app.example/x",
    ]) {
      const res = await start(key, "x", redirectUri);
      expect(res.status).toBe(400);
      const b = await body(res);
      expect(b.error.code).toBe("VALIDATION_ERROR");
      expect(b.error.details[0].field).toBe("redirectUri");
    }
    expect((await start(key, "x", "https://app.example/after")).status).toBe(201);
  });
});

describe("the connect is bound to the user who started it (issue 25, decision 1016)", () => {
  test("a victim approving someone's authorizeUrl links nothing: the callback stores nothing, another user's confirmation is 403 and discards it", async () => {
    const { key, org } = await h.seedOrg();
    const other = await secondMember(org.id);
    const outsider = (await h.seedOrg()).key;
    const started = await body(await start(key, "x", "https://app.example/after"));
    // The victim's browser comes back: the account is not stored yet.
    const back = await callback(await consent(started.authorizeUrl));
    expect(back.status).toBe(302);
    const to = new URL(back.headers.get("location")!);
    const token = to.searchParams.get("confirm")!;
    expect(to.searchParams.get("account")).toBeNull();
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts).toEqual([]);
    // An outsider's key: refused, and the pending connection is discarded.
    expect((await confirm(outsider, started.state, token)).status).toBe(403);
    expect((await confirm(key, started.state, token)).status).toBe(400);
    // Another member of the same organization cannot confirm it either.
    const second = await body(await start(key, "x"));
    const pending = (await body(await callback(await consent(second.authorizeUrl)))).pending;
    expect((await confirm(other, pending.state, pending.confirm)).status).toBe(403);
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts).toEqual([]);
    // The starting user with the browser's token: connected.
    const third = await body(await start(key, "x"));
    const mine = (await body(await callback(await consent(third.authorizeUrl)))).pending;
    expect((await confirm(key, mine.state, "a-guess")).status).toBe(400);
    const ok = await confirm(key, mine.state, mine.confirm);
    expect(ok.status).toBe(201);
    expect((await body(ok)).account).toMatchObject({ platform: "x", accountId: mine.accountId });
  });

  test("the attacker's browser holds the cookie, the victim's does not: the victim's callback (even carrying a connect cookie of its own) links nothing, its confirm by the victim is 403; the attacker's own browser completes only its own connects", async () => {
    const attacker = await h.seedOrg();
    const victim = await h.seedOrg();
    // The attacker starts a connect in their browser and sends the authorizeUrl to the victim.
    const started = await start(attacker.key, "x", "https://app.example/after");
    const attackerCookie = cookieOf(started);
    const { authorizeUrl, state } = await body(started);
    // The victim started a connect of their own earlier: their browser has a cookie, for another state.
    const own = await start(victim.key, "x");
    const back = await callback(await consent(authorizeUrl), cookieOf(own));
    expect(back.status).toBe(302);
    const to = new URL(back.headers.get("location")!);
    expect(to.searchParams.get("account")).toBeNull();
    expect(to.searchParams.get("state")).toBe(state);
    expect(
      (await body(await h.call("GET", "/api/v1/social/accounts", { key: attacker.key }))).accounts,
    ).toEqual([]);
    // The victim's front end confirms with the victim's key: 403, and discarded.
    expect((await confirm(victim.key, state, to.searchParams.get("confirm")!)).status).toBe(403);
    expect((await confirm(attacker.key, state, to.searchParams.get("confirm")!)).status).toBe(400);
    // Nothing was ever linked into the attacker's organization; the state is spent, so the attacker's
    // browser cannot replay the victim's landing with its cookie either.
    const replay = await callback(
      `http://localhost/api/v1/social/oauth/x/callback?code=whatever&state=${state}`,
      attackerCookie,
    );
    expect(replay.status).toBe(400);
    expect(
      (await body(await h.call("GET", "/api/v1/social/accounts", { key: attacker.key }))).accounts,
    ).toEqual([]);
    // The same cookie does complete the attacker's own authorization in the attacker's own browser.
    const mine = await start(attacker.key, "x");
    const done = await callback(await consent((await body(mine)).authorizeUrl), cookieOf(mine));
    expect(done.status).toBe(200);
    expect((await body(done)).account.platform).toBe("x");
  });

  test("an allowed CORS origin may start the connect with credentials (the cookie's answer); other routes stay uncredentialed", async () => {
    const cors = await buildTestApp({
      env: { ...fake.env, ...fake.oauthEnv, CORS_ORIGINS: "https://app.example" },
    });
    try {
      const o = await cors.seedOrg();
      const headers = { origin: "https://app.example" };
      const res = await cors.call("POST", "/api/v1/social/accounts/connect", {
        key: o.key,
        body: { platform: "x" },
        headers,
      });
      expect(res.status).toBe(201);
      expect(res.headers.get("access-control-allow-credentials")).toBe("true");
      expect(res.headers.get("set-cookie")).toStartWith("sca_connect=");
      const pre = await cors.call("OPTIONS", "/api/v1/social/accounts/connect", {
        headers: { ...headers, "access-control-request-method": "POST" },
      });
      expect(pre.headers.get("access-control-allow-credentials")).toBe("true");
      const other = await cors.call("GET", "/api/v1/social/accounts", { key: o.key, headers });
      expect(other.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(other.headers.get("access-control-allow-credentials")).toBeNull();
    } finally {
      await cors.close();
    }
  });

  test("a confirmation after its 10 minutes is refused", async () => {
    const { key } = await h.seedOrg();
    const started = await body(await start(key, "reddit"));
    const pending = (await body(await callback(await consent(started.authorizeUrl)))).pending;
    await h.sql`update social_oauth_states set expires_at = now() - interval '1 second' where state = ${pending.state}`;
    expect((await confirm(key, pending.state, pending.confirm)).status).toBe(400);
  });
});

describe("Meta ids beyond 2^53 come from /me, as strings", () => {
  test.each(["instagram", "threads"] as const)(
    "%s: the stored account id is /me's exact id (the token answer's JSON number is not used), and publishing works",
    async (platform) => {
      const { key } = await h.seedOrg();
      const account = await complete(key, platform);
      // The fake's ids are 20 digits (178414…), beyond 2^53: JSON.parse of the token answer changes them.
      expect(account.accountId).toMatch(/^178414\d{14}$/);
      expect(String(Number(account.accountId))).not.toBe(account.accountId);
      const adapters = createPlatformAdapters(h.ctx);
      const ready = await readyAccount(h.ctx, account.id, adapters, new Date());
      const jpeg = sampleImage("jpeg", { size: 300 });
      const published = await adapters[platform]!.publish(ready, {
        text: "first post",
        media: [
          {
            kind: "image",
            contentType: "image/jpeg",
            size: 300,
            url: fake.host(jpeg, "image/jpeg"),
            read: async () => jpeg,
          },
        ],
      });
      expect(fake.publication(published.platformPostId)?.text).toBe("first post");
    },
  );
});

describe("LinkedIn: only the scopes an ordinary app is granted", () => {
  test("connect works for an app without r_member_social (LinkedIn refuses it at authorize with unauthorized_scope_error); its account has no refresh token and shows expiresAt", async () => {
    const { key } = await h.seedOrg();
    const account = await complete(key, "linkedin");
    expect(account.permissions).not.toContain("r_member_social");
    expect(Date.parse(account.expiresAt)).toBeGreaterThan(Date.now() + 59 * 86_400_000);
    const [row] = await h.sql`select refresh_token_ciphertext from social_accounts where id = ${account.id}`;
    expect(row!.refresh_token_ciphertext).toBeNull();
    // Asked for anyway (SOCIAL_LINKEDIN_RESTRICTED_SCOPES set while LinkedIn did not grant it): refused there.
    const restricted = await buildTestApp({
      env: { ...fake.env, ...fake.oauthEnv, SOCIAL_LINKEDIN_RESTRICTED_SCOPES: "r_member_social" },
    });
    try {
      const o = await restricted.seedOrg();
      const res = await restricted.call("POST", "/api/v1/social/accounts/connect", {
        key: o.key,
        body: { platform: "linkedin" },
      });
      const { authorizeUrl } = await body(res);
      expect(new URL(authorizeUrl).searchParams.get("scope")).toContain("r_member_social");
      const location = new URL(await consent(authorizeUrl));
      expect(location.searchParams.get("error")).toBe("unauthorized_scope_error");
      // Once LinkedIn granted the product, the same setting connects with it.
      fake.grantLinkedinScope("r_member_social");
      const again = await body(
        await restricted.call("POST", "/api/v1/social/accounts/connect", {
          key: o.key,
          body: { platform: "linkedin" },
        }),
      );
      const u = new URL(await consent(again.authorizeUrl));
      const back = await restricted.app.handle(new Request(`http://localhost${u.pathname}${u.search}`));
      expect((await body(back)).pending.platform).toBe("linkedin");
    } finally {
      await restricted.close();
    }
  });
});

describe("Reddit: the history scope, so an image post's id is found", () => {
  test("connect asks for history; an image post then gets its t3_ id", async () => {
    const { key } = await h.seedOrg();
    const account = await complete(key, "reddit");
    expect(account.permissions).toContain("history");
    const adapters = createPlatformAdapters(h.ctx);
    const ready = await readyAccount(h.ctx, account.id, adapters, new Date());
    const jpeg = sampleImage("jpeg", { size: 300 });
    const published = await adapters.reddit!.publish(ready, {
      text: "a picture",
      media: [
        {
          kind: "image",
          contentType: "image/jpeg",
          size: 300,
          url: fake.host(jpeg, "image/jpeg"),
          read: async () => jpeg,
        },
      ],
    });
    expect(published.platformPostId).toMatch(/^t3_/);
  });
});

describe("TikTok: the user's privacy level and consent (decisions 1013, 1031)", () => {
  test("unaudited app (the default): a contract-shaped post {content, media, accounts} without platformOptions is published SELF_ONLY, recorded {consent: null, reason}", async () => {
    const { key } = await h.seedOrg();
    const tiktok = await connectSocialAccount(h, key, "tiktok");
    const id = (await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg")).id;
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "no choice to make", media: [id], accounts: [tiktok.id] },
    });
    expect(res.status).toBe(201);
    const created = (await body(res)).post;
    expect(created.targets[0]).toMatchObject({ platform: "tiktok", status: "published", error: null });
    expect(created.platformOptions.tiktok).toEqual({
      privacyLevel: "SELF_ONLY",
      consent: null,
      consentedAt: null,
      consentedBy: null,
      reason: "unaudited app: private only",
    });
    const got = (await body(await h.call("GET", `/api/v1/social/posts/${created.postId}`, { key }))).post;
    expect(got.platformOptions).toEqual(created.platformOptions);
    const [row] = await h.sql`select platform_post_id from social_targets where post_id = ${created.postId}`;
    expect(fake.publication(row!.platform_post_id)?.privacy).toBe("SELF_ONLY");
  });

  test("audited app (SOCIAL_TIKTOK_AUDITED=1): platformOptions.tiktok is required (400, nothing published); the user's PUBLIC_TO_EVERYONE with consent goes out public", async () => {
    const audited = await buildTestApp({
      env: {
        ...fake.env,
        SOCIAL_POLL_INTERVAL_MS: "5",
        SOCIAL_TIKTOK_AUDITED: "1",
        SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "http://127.0.0.1:3000/api/media/",
      },
    });
    fake.setTikTokAudited(true);
    fetchMediaFromApp(fake, audited);
    try {
      const { key } = await audited.seedOrg();
      const token = `tok-tiktok-${Math.random()}`;
      fake.setTikTokPrivacy(token, ["PUBLIC_TO_EVERYONE", "SELF_ONLY"]);
      const tiktok = await connectSocialAccount(audited, key, "tiktok", { accessToken: token });
      const id = (await uploadSocialMedia(audited, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg"))
        .id;
      const missing = await audited.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "x", media: [id], accounts: [tiktok.id] },
      });
      expect(missing.status).toBe(400);
      expect((await body(missing)).error.details.map((d: Json) => d.field)).toContain(
        "platformOptions.tiktok",
      );
      expect((await body(await audited.call("GET", "/api/v1/social/posts", { key }))).posts).toEqual([]);
      const res = await audited.call("POST", "/api/v1/social/posts", {
        key,
        body: {
          content: "public by choice",
          media: [id],
          accounts: [tiktok.id],
          platformOptions: { tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE", consent: true } },
        },
      });
      expect(res.status).toBe(201);
      const created = (await body(res)).post;
      expect(created.targets[0].status).toBe("published");
      expect(created.platformOptions.tiktok).toMatchObject({
        privacyLevel: "PUBLIC_TO_EVERYONE",
        consent: true,
      });
      const [row] =
        await audited.sql`select platform_post_id from social_targets where post_id = ${created.postId}`;
      expect(fake.publication(row!.platform_post_id)?.privacy).toBe("PUBLIC_TO_EVERYONE");
    } finally {
      fake.setTikTokAudited(false);
      fetchMediaFromApp(fake, h);
      await audited.close();
    }
  });

  test("a TikTok choice without consent, or public on an unaudited app: 400, nothing published", async () => {
    const { key } = await h.seedOrg();
    const tiktok = await connectSocialAccount(h, key, "tiktok");
    const id = (await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg")).id;
    const cases: [Json | undefined, string][] = [
      [{ tiktok: { privacyLevel: "SELF_ONLY", consent: false } }, "platformOptions.tiktok.consent"],
      [
        { tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE", consent: true } },
        "platformOptions.tiktok.privacyLevel",
      ],
    ];
    for (const [platformOptions, field] of cases) {
      const res = await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "x", media: [id], accounts: [tiktok.id], platformOptions },
      });
      expect(res.status).toBe(400);
      expect((await body(res)).error.details.map((d: Json) => d.field)).toContain(field);
    }
    expect((await body(await h.call("GET", "/api/v1/social/posts", { key }))).posts).toEqual([]);
  });

  test("GET /accounts/{id}/creator-info: the creator's options from TikTok, SELF_ONLY alone selectable while unaudited; 400 for another platform", async () => {
    const { key } = await h.seedOrg();
    const token = `tok-tiktok-${Math.random()}`;
    fake.setTikTokPrivacy(token, ["PUBLIC_TO_EVERYONE", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]);
    const tiktok = await connectSocialAccount(h, key, "tiktok", { accessToken: token });
    const res = await h.call("GET", `/api/v1/social/accounts/${tiktok.id}/creator-info`, { key });
    expect(res.status).toBe(200);
    expect((await body(res)).creatorInfo).toMatchObject({
      privacyLevelOptions: ["PUBLIC_TO_EVERYONE", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
      selectablePrivacyLevels: ["SELF_ONLY"],
      maxVideoPostDurationSec: 600,
    });
    const x = await connectSocialAccount(h, key, "x");
    expect((await h.call("GET", `/api/v1/social/accounts/${x.id}/creator-info`, { key })).status).toBe(400);
    const other = (await h.seedOrg()).key;
    expect(
      (await h.call("GET", `/api/v1/social/accounts/${tiktok.id}/creator-info`, { key: other })).status,
    ).toBe(404);
  });

  test("SELF_ONLY with consent: posted privately, the choice and consent recorded with the post", async () => {
    const { key, user } = await h.seedOrg();
    const tiktok = await connectSocialAccount(h, key, "tiktok");
    const id = (await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg")).id;
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: {
        content: "private first",
        media: [id],
        accounts: [tiktok.id],
        platformOptions: { tiktok: { privacyLevel: "SELF_ONLY", consent: true } },
      },
    });
    expect(res.status).toBe(201);
    const created = (await body(res)).post;
    expect(created.targets[0]).toMatchObject({ status: "published", error: null });
    expect(created.platformOptions.tiktok).toMatchObject({
      privacyLevel: "SELF_ONLY",
      consent: true,
      consentedBy: user.id,
    });
    const got = (await body(await h.call("GET", `/api/v1/social/posts/${created.postId}`, { key }))).post;
    expect(got.platformOptions).toEqual(created.platformOptions);
    const [row] = await h.sql`select platform_post_id from social_targets where post_id = ${created.postId}`;
    expect(fake.publication(row!.platform_post_id)?.privacy).toBe("SELF_ONLY");
  });
});

describe("TikTok metrics: the spec's further platform, opt-in reading (decision 1032)", () => {
  /** connect (OAuth) → a SELF_ONLY photo post → a collector pass an hour later: the target's snapshot. */
  async function connectPostCollect(app: TestApp, audited = false) {
    const { key } = await app.seedOrg();
    const started = await app.call("POST", "/api/v1/social/accounts/connect", {
      key,
      body: { platform: "tiktok" },
    });
    const { authorizeUrl } = await body(started);
    const scope = new URL(authorizeUrl).searchParams.get("scope")!;
    const u = new URL(await consent(authorizeUrl));
    const back = await app.app.handle(
      new Request(`http://localhost${u.pathname}${u.search}`, { headers: { cookie: cookieOf(started) } }),
    );
    expect(back.status).toBe(200);
    const account = (await body(back)).account;
    const id = (await uploadSocialMedia(app, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg")).id;
    const res = await app.call("POST", "/api/v1/social/posts", {
      key,
      // Metrics are read of a public post, which only an audited app makes: a private (SELF_ONLY) post
      // has no id to ask for (issue 33).
      body: {
        content: "metrics?",
        media: [id],
        accounts: [account.id],
        ...(audited
          ? { platformOptions: { tiktok: { privacyLevel: "PUBLIC_TO_EVERYONE", consent: true } } }
          : {}),
      },
    });
    expect(res.status).toBe(201);
    const post = (await body(res)).post;
    const [row] = await app.sql`select platform_post_id from social_targets where post_id = ${post.postId}`;
    fake.setMetrics(row!.platform_post_id, { views: 640, likes: 12, comments: 3, shares: 2 });
    const before = fake.requests.filter((r) => r.path.startsWith("/video/query")).length;
    await captureDueSnapshots(app.ctx, createPlatformAdapters(app.ctx), {
      now: new Date(Date.parse(post.publishedAt) + 3_700_000),
    });
    const got = (await body(await app.call("GET", `/api/v1/social/posts/${post.postId}`, { key }))).post;
    const queried = fake.requests.filter((r) => r.path.startsWith("/video/query")).length - before;
    return { scope, account, snapshot: got.targets[0].metrics[0], queried };
  }

  test("unset (default): connect does not ask for video.list, TikTok targets report null metrics (not_exposed), /video/query/ is never called", async () => {
    const { scope, account, snapshot, queried } = await connectPostCollect(h);
    expect(scope.split(",")).toEqual(["user.info.basic", "video.publish"]);
    expect(account.permissions).not.toContain("video.list");
    expect(snapshot).toMatchObject({
      stage: 1,
      views: null,
      likes: null,
      comments: null,
      shares: null,
      saves: null,
    });
    expect(snapshot.extra.unavailable).toEqual({
      views: "not_exposed",
      likes: "not_exposed",
      comments: "not_exposed",
      shares: "not_exposed",
      saves: "not_exposed",
    });
    expect(queried).toBe(0);
  });

  test("SOCIAL_TIKTOK_READ_METRICS=1: connect asks for video.list, and the metrics are read through /v2/video/query/", async () => {
    const reads = await buildTestApp({
      env: {
        ...fake.env,
        ...fake.oauthEnv,
        SOCIAL_POLL_INTERVAL_MS: "5",
        SOCIAL_TIKTOK_READ_METRICS: "1",
        SOCIAL_TIKTOK_AUDITED: "1",
        SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: "http://127.0.0.1:3000/api/media/",
      },
    });
    fetchMediaFromApp(fake, reads);
    fake.setTikTokAudited(true);
    try {
      const { scope, account, snapshot, queried } = await connectPostCollect(reads, true);
      expect(scope.split(",")).toContain("video.list");
      expect(account.permissions).toContain("video.list");
      expect(snapshot).toMatchObject({ views: 640, likes: 12, comments: 3, shares: 2, saves: null });
      expect(snapshot.extra.unavailable).toEqual({ saves: "not_exposed" });
      expect(queried).toBe(1);
    } finally {
      fake.setTikTokAudited(false);
      fetchMediaFromApp(fake, h);
      await reads.close();
    }
  });
});
