import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decryptSecret } from "@site/domain/core";
import { captureDueSnapshots } from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount } from "../../testing/social.ts";

let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env });
});
afterAll(async () => {
  fake.close();
  await h.close();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
type Json = Record<string, any>;
const body = async (res: Response) => (await res.json()) as Json;

const connect = (key: string, platform: string, extra: Json = {}) =>
  connectSocialAccount(h, key, platform, extra) as Promise<Json>;

describe("auth rules", () => {
  for (const route of [
    { method: "GET", path: "/api/v1/social/accounts" },
    {
      method: "POST",
      path: "/api/v1/social/accounts",
      body: { platform: "x", accountId: "1", accessToken: "t" },
    },
    { method: "DELETE", path: "/api/v1/social/accounts/00000000-0000-4000-8000-000000000000" },
    { method: "GET", path: "/api/v1/social/posts" },
    { method: "POST", path: "/api/v1/social/posts", body: { content: "hi", accounts: [] } },
    { method: "GET", path: "/api/v1/social/posts/00000000-0000-4000-8000-000000000000" },
    { method: "GET", path: "/api/v1/social/performance" },
  ])
    test(`${route.method} ${route.path}: 401 without or with a bad key, 403 without social:write`, async () => {
      await expectAuthRules(h, { ...route, scope: "social:write" });
    });
});

describe("social accounts", () => {
  test("connecting stores the token encrypted and never returns it; connecting again reconnects", async () => {
    const { key, org } = await h.seedOrg();
    const res = await h.call("POST", "/api/v1/social/accounts", {
      key,
      body: {
        platform: "instagram",
        accountId: "17841400000",
        displayName: "Acme",
        accessToken: "IGQVJ-secret-token",
        permissions: ["instagram_basic"],
      },
    });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain("IGQVJ-secret-token");
    const { account } = JSON.parse(text);
    expect(account).toMatchObject({
      platform: "instagram",
      accountId: "17841400000",
      displayName: "Acme",
      permissions: ["instagram_basic"],
      tier: null,
    });
    const [row] = await h.sql`select token_ciphertext from social_accounts where id = ${account.id}`;
    expect(row!.token_ciphertext).not.toContain("IGQVJ");
    expect(decryptSecret(h.ctx.config.secretKey, row!.token_ciphertext)).toBe("IGQVJ-secret-token");

    const again = await h.call("POST", "/api/v1/social/accounts", {
      key,
      body: {
        platform: "instagram",
        accountId: "17841400000",
        accessToken: "IGQVJ-new",
        permissions: ["instagram_basic", "instagram_manage_insights"],
      },
    });
    expect(again.status).toBe(200);
    expect((await body(again)).account).toMatchObject({
      id: account.id,
      permissions: ["instagram_basic", "instagram_manage_insights"],
    });

    const list = await body(await h.call("GET", "/api/v1/social/accounts", { key }));
    expect(list.accounts.map((a: Json) => a.id)).toEqual([account.id]);
    expect(JSON.stringify(list)).not.toContain("IGQVJ");
    const other = await h.seedOrg();
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key: other.key }))).accounts).toEqual(
      [],
    );
    expect(org.id).toBeString();
  });

  test("an x account defaults to the free tier", async () => {
    const { key } = await h.seedOrg();
    expect((await connect(key, "x")).tier).toBe("free");
    expect((await connect(key, "x", { tier: "basic" })).tier).toBe("basic");
  });

  test("bad input answers 400 VALIDATION_ERROR", async () => {
    const { key } = await h.seedOrg();
    for (const b of [
      { platform: "myspace", accountId: "1", accessToken: "t" },
      { platform: "x", accountId: "1" },
      { platform: "x", accountId: "", accessToken: "t" },
      { platform: "x", accountId: "1", accessToken: "t", tier: "gold" },
      { platform: "x", accountId: "1", accessToken: "t", permissions: "all" },
      { platform: "x", accountId: "1", accessToken: "t", expiresAt: "tomorrow" },
      { platform: "x", accountId: "1", accessToken: "t", refreshToken: "" },
    ]) {
      const res = await h.call("POST", "/api/v1/social/accounts", { key, body: b });
      expect(res.status).toBe(400);
      expect((await body(res)).error.code).toBe("VALIDATION_ERROR");
    }
  });
});

describe("refresh tokens, status and disconnecting", () => {
  test("a refresh token and expiry are stored encrypted; accounts show status and expiresAt", async () => {
    const { key } = await h.seedOrg();
    const expiresAt = "2031-01-02T03:04:05.000Z";
    const account = await connect(key, "x", { refreshToken: "rt-secret-refresh", expiresAt });
    expect(account).toMatchObject({ status: "connected", expiresAt });
    const [row] = await h.sql`select refresh_token_ciphertext from social_accounts where id = ${account.id}`;
    expect(row!.refresh_token_ciphertext).not.toContain("rt-secret");
    expect(decryptSecret(h.ctx.config.secretKey, row!.refresh_token_ciphertext)).toBe("rt-secret-refresh");
    const list = await h.call("GET", "/api/v1/social/accounts", { key });
    expect(await list.text()).not.toContain("rt-secret-refresh");
  });

  test("an account whose refresh was refused lists as reconnect_required; reconnecting makes it connected", async () => {
    const { key } = await h.seedOrg();
    const account = await connect(key, "reddit");
    await h.sql`update social_accounts set status = 'reconnect_required' where id = ${account.id}`;
    const list = await body(await h.call("GET", "/api/v1/social/accounts", { key }));
    expect(list.accounts[0]).toMatchObject({ id: account.id, status: "reconnect_required" });
    const again = await h.call("POST", "/api/v1/social/accounts", {
      key,
      body: { platform: "reddit", accountId: account.accountId, accessToken: "fresh" },
    });
    expect((await body(again)).account).toMatchObject({ id: account.id, status: "connected" });
  });

  test("DELETE disconnects: 204, tokens erased, no longer listed or published to; another org's is 404", async () => {
    const { key } = await h.seedOrg();
    const other = await h.seedOrg();
    const account = await connect(key, "reddit", { refreshToken: "rt-x" });
    expect((await h.call("DELETE", `/api/v1/social/accounts/${account.id}`, { key: other.key })).status).toBe(
      404,
    );
    const res = await h.call("DELETE", `/api/v1/social/accounts/${account.id}`, { key });
    expect(res.status).toBe(204);
    const [row] =
      await h.sql`select token_ciphertext, refresh_token_ciphertext from social_accounts where id = ${account.id}`;
    expect(row).toEqual({ token_ciphertext: "", refresh_token_ciphertext: null });
    expect((await body(await h.call("GET", "/api/v1/social/accounts", { key }))).accounts).toEqual([]);
    const post = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "hi", accounts: [account.id] },
    });
    expect(post.status).toBe(400);
    expect((await h.call("DELETE", `/api/v1/social/accounts/${account.id}`, { key })).status).toBe(404);
    expect((await h.call("DELETE", "/api/v1/social/accounts/not-a-uuid", { key })).status).toBe(404);
  });
});

describe("social posts", () => {
  test("publishing: each target through its adapter; a failing target says why and does not block the others", async () => {
    const { key } = await h.seedOrg();
    const reddit = await connect(key, "reddit");
    const linkedin = await connect(key, "linkedin", { accessToken: "tok-revoked-linkedin" });
    fake.expire("tok-revoked-linkedin");
    const x = await connect(key, "x", { tier: "basic" });
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: {
        content: "Launch day",
        platformOverrides: { x: "Launch day, short" },
        accounts: [reddit.id, linkedin.id, x.id],
      },
    });
    expect(res.status).toBe(201);
    const { post } = await body(res);
    expect(post.content).toBe("Launch day");
    expect(post.platformOverrides).toEqual({ x: "Launch day, short" });
    expect(Math.abs(Date.parse(post.publishedAt) - Date.now())).toBeLessThan(60_000);
    const byPlatform = Object.fromEntries(post.targets.map((t: Json) => [t.platform, t]));
    expect(byPlatform.reddit).toMatchObject({ accountId: reddit.id, status: "published", error: null });
    expect(byPlatform.reddit.url).toStartWith("https://www.reddit.com/r/u_");
    expect(byPlatform.x).toMatchObject({ status: "published", error: null });
    expect(byPlatform.linkedin).toMatchObject({ status: "failed", url: null });
    expect(byPlatform.linkedin.error).toContain("REVOKED_ACCESS_TOKEN");
    const [xRow] = await h.sql`select platform_post_id from social_targets where account_id = ${x.id}`;
    const [redditRow] =
      await h.sql`select platform_post_id from social_targets where account_id = ${reddit.id}`;
    expect(fake.publishedText(xRow!.platform_post_id)).toBe("Launch day, short");
    expect(fake.publishedText(redditRow!.platform_post_id)).toBe("Launch day");
  });

  test("unknown or foreign accounts, empty content: 400 VALIDATION_ERROR and nothing published", async () => {
    const { key } = await h.seedOrg();
    const other = await h.seedOrg();
    const foreign = await connect(other.key, "reddit");
    for (const b of [
      { content: "hi", accounts: [foreign.id] },
      { content: "hi", accounts: ["not-a-uuid"] },
      { content: "", accounts: [foreign.id] },
      { content: "hi", accounts: [] },
      { content: "hi", platformOverrides: { myspace: "x" }, accounts: [foreign.id] },
    ]) {
      const res = await h.call("POST", "/api/v1/social/posts", { key, body: b });
      expect(res.status).toBe(400);
      expect((await body(res)).error.code).toBe("VALIDATION_ERROR");
    }
    expect((await body(await h.call("GET", "/api/v1/social/posts", { key }))).posts).toEqual([]);
  });

  test("the post with `metrics`: each target's full snapshot series; another org's post is 404", async () => {
    const { key } = await h.seedOrg();
    const reddit = await connect(key, "reddit");
    const li = await connect(key, "linkedin");
    const { post } = await body(
      await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "series", accounts: [reddit.id, li.id] },
      }),
    );
    // The targets publish a few ms apart and publishedAt is the earliest: passes run a second later, so
    // every target is due (a pass exactly an hour after the first would find the second not yet due).
    const t0 = Date.parse(post.publishedAt) + 1000;
    const adapters = createPlatformAdapters(h.ctx);
    await captureDueSnapshots(h.ctx, adapters, { now: new Date(t0 + HOUR) });
    await captureDueSnapshots(h.ctx, adapters, { now: new Date(t0 + DAY) });
    const res = await h.call("GET", `/api/v1/social/posts/${post.postId}`, { key });
    expect(res.status).toBe(200);
    const got = (await body(res)).post;
    for (const t of got.targets) {
      expect(t.metrics.map((m: Json) => m.stage)).toEqual([1, 2]);
      expect(t.metrics[0].capturedAt).toBe(new Date(t0 + HOUR).toISOString());
    }
    const li0 = got.targets.find((t: Json) => t.platform === "linkedin").metrics[0];
    expect(li0.views).toBeNull();
    expect(li0.extra.unavailable.views).toBe("not_exposed");
    const other = await h.seedOrg();
    expect((await h.call("GET", `/api/v1/social/posts/${post.postId}`, { key: other.key })).status).toBe(404);
    expect((await h.call("GET", "/api/v1/social/posts/nope", { key })).status).toBe(404);
    const list = await body(await h.call("GET", "/api/v1/social/posts", { key }));
    expect(list.posts.map((p: Json) => p.postId)).toEqual([post.postId]);
  });
});

/** Seeds a published post `agoMs` ago with one target per given snapshot series (stages). */
async function seedPublished(orgId: string, accountId: string, agoMs: number, series: number[][] = [[]]) {
  const publishedAt = new Date(Date.now() - agoMs);
  const [post] = await h.sql`insert into social_posts (org_id, content, platform_overrides, published_at)
    values (${orgId}, ${`post ${agoMs}`}, '{"reddit":"r"}'::jsonb, ${publishedAt.toISOString()}) returning id`;
  for (const stages of series) {
    const [t] =
      await h.sql`insert into social_targets (post_id, account_id, platform, platform_post_id, url, status, published_at, next_stage)
      values (${post!.id}, ${accountId}, 'reddit', 't3_x', 'https://www.reddit.com/x', 'published', ${publishedAt.toISOString()}, ${stages.length + 1}) returning id`;
    for (const s of stages)
      await h.sql`insert into social_snapshots (target_id, stage, views, likes, comments, shares, saves, extra, captured_at)
        values (${t!.id}, ${s}, null, ${s * 10}, ${s}, null, null, ${JSON.stringify({ upvoteRatio: 0.9, unavailable: { views: "not_exposed" } })}::jsonb,
        ${new Date(publishedAt.getTime() + [0, HOUR, DAY, 3 * DAY, 7 * DAY][s]!).toISOString()})`;
  }
  return post!.id as string;
}

describe("GET /api/v1/social/performance", () => {
  let key: string;
  let ids: string[]; // newest first
  let old: string;
  beforeAll(async () => {
    const seeded = await h.seedOrg();
    key = seeded.key;
    const account = await connect(key, "reddit");
    ids = [];
    for (let i = 0; i < 60; i++)
      ids.push(await seedPublished(seeded.org.id, account.id, 2 * HOUR + i * 10 * HOUR, [[1, 2]]));
    old = await seedPublished(seeded.org.id, account.id, 40 * DAY, [[1, 2, 3, 4]]);
  });
  const report = async (query: string) => {
    const res = await h.call("GET", `/api/v1/social/performance${query}`, { key });
    expect(res.status).toBe(200);
    return (await body(res)).posts as Json[];
  };

  test("defaults: the last 30 days, 50 posts, newest first", async () => {
    const posts = await report("");
    expect(posts.map((p) => p.postId)).toEqual(ids.slice(0, 50));
    const times = posts.map((p) => Date.parse(p.publishedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  test("limit up to 100, offset, and days widen or narrow the window", async () => {
    expect((await report("?limit=100")).map((p) => p.postId)).toEqual(ids);
    expect((await report("?limit=100&offset=50")).map((p) => p.postId)).toEqual(ids.slice(50));
    expect((await report("?limit=5&offset=3")).map((p) => p.postId)).toEqual(ids.slice(3, 8));
    expect((await report("?days=90&limit=100")).map((p) => p.postId)).toEqual([...ids, old]);
    expect((await report("?days=1")).length).toBe(3);
    expect(await report("?offset=1000")).toEqual([]);
  });

  test("each target has first (earliest) and latest (most recent) snapshots; null metrics stay null", async () => {
    const [post] = await report("?limit=1");
    expect(post).toMatchObject({ content: expect.any(String), platformOverrides: { reddit: "r" } });
    const [target] = post!.targets;
    expect(target).toMatchObject({ platform: "reddit", url: "https://www.reddit.com/x" });
    expect(target.first).toMatchObject({
      stage: 1,
      likes: 10,
      views: null,
      shares: null,
      saves: null,
      comments: 1,
    });
    expect(target.latest).toMatchObject({ stage: 2, likes: 20, views: null });
    expect(target.latest.extra).toEqual({ upvoteRatio: 0.9, unavailable: { views: "not_exposed" } });
    expect(target.first.capturedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const full = (await report("?days=90&limit=100")).at(-1)!;
    expect([full.targets[0].first.stage, full.targets[0].latest.stage]).toEqual([1, 4]);
  });

  test("a post published less than an hour ago has first and latest null; failed targets are left out", async () => {
    const seeded = await h.seedOrg();
    const account = await connect(seeded.key, "reddit");
    const fresh = await seedPublished(seeded.org.id, account.id, 20 * 60_000, [[]]);
    await h.sql`insert into social_targets (post_id, account_id, platform, status, error) values (${fresh}, ${account.id}, 'reddit', 'failed', 'rejected')`;
    const res = await h.call("GET", "/api/v1/social/performance", { key: seeded.key });
    const [post] = (await body(res)).posts;
    expect(post.postId).toBe(fresh);
    expect(post.targets).toEqual([
      {
        platform: "reddit",
        accountId: account.id,
        url: "https://www.reddit.com/x",
        first: null,
        latest: null,
      },
    ]);
  });

  test("another organization's posts are never reported", async () => {
    const other = await h.seedOrg();
    expect(
      await (async () =>
        (await body(await h.call("GET", "/api/v1/social/performance", { key: other.key }))).posts)(),
    ).toEqual([]);
  });

  test("non-numeric or out-of-range days, limit, offset answer 400 VALIDATION_ERROR naming the field", async () => {
    for (const [q, field] of [
      ["days=abc", "days"],
      ["days=91", "days"],
      ["days=0", "days"],
      ["days=1.5", "days"],
      ["limit=101", "limit"],
      ["limit=0", "limit"],
      ["limit=ten", "limit"],
      ["offset=-1", "offset"],
      ["offset=x", "offset"],
      ["offset=1e3", "offset"],
    ] as const) {
      const res = await h.call("GET", `/api/v1/social/performance?${q}`, { key });
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      const b = await body(res);
      expect(b.error.code).toBe("VALIDATION_ERROR");
      expect(b.error.details[0].field).toBe(field);
    }
  });

  test("the OpenAPI document describes the parameters, their bounds and the 400", async () => {
    const doc = await body(await h.call("GET", "/swagger/json"));
    const op = doc.paths["/api/v1/social/performance"].get;
    const params = Object.fromEntries(op.parameters.map((p: Json) => [p.name, p]));
    expect(params.days.schema.description ?? params.days.description).toContain(
      "max 90".replace("max ", "1.."),
    );
    expect(JSON.stringify(params.limit)).toContain("1..100");
    expect(JSON.stringify(params.days)).toContain("400 VALIDATION_ERROR");
    expect(op.responses["400"]).toBeDefined();
    expect(doc.paths["/api/v1/social/posts/{postId}"].get).toBeDefined();
  });
});
