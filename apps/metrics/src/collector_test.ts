import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "@site/config";
import type { DbHandle } from "@site/db";
import { createOrganization, type Principal } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import {
  type ConnectAccountBody,
  captureDueSnapshots,
  connectSocialAccount,
  createSocialPost,
  type SocialPlatform,
} from "@site/domain/social";
import { sampleImage } from "@site/domain/testing";
import { createPlatformAdapters, OAUTH } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type MetricsTestbed, startMetricsTestbed } from "../testing/mod.ts";

const HOUR = 3_600_000;
let handle: DbHandle;
let fake: FakePlatforms;
let ctx: MediaContext;

let bed: MetricsTestbed;
beforeAll(async () => {
  bed = await startMetricsTestbed();
  ({ handle, fake, ctx: ctx } = bed);
});
afterAll(() => bed.close());

async function seedOrg(): Promise<Principal> {
  const org = await createOrganization(ctx, { name: `Org ${Math.random().toString(36).slice(2, 7)}` });
  return { keyId: "k", orgId: org.id, userId: "u", scopes: ["social:write"], role: "owner" };
}

async function connect(
  p: Principal,
  platform: SocialPlatform,
  o: { token?: string; permissions?: string[]; tier?: ConnectAccountBody["tier"] } = {},
) {
  const { account } = await connectSocialAccount(ctx, p, {
    platform,
    accountId: `${platform}-${Math.random().toString(36).slice(2, 8)}`,
    accessToken: o.token ?? `tok-${Math.random().toString(36).slice(2)}`,
    permissions: o.permissions ?? [],
    tier: o.tier,
  });
  return account;
}

async function publish(p: Principal, accountIds: string[], adapters = createPlatformAdapters(ctx)) {
  const post = await createSocialPost(ctx, p, { content: "launch day", accounts: accountIds }, adapters);
  const rows = await handle.sql<{ id: string; account_id: string; platform_post_id: string }[]>`
    select id, account_id, platform_post_id from social_targets where post_id = ${post.postId}`;
  const targets = accountIds.map((a) => rows.find((r) => r.account_id === a)!);
  return { post, targets, publishedAt: new Date(post.publishedAt!) };
}

async function snapshotsOf(targetId: string) {
  const rows = await handle.sql<{ stage: number; likes: number | null; captured_at: string }[]>`
    select stage, likes, captured_at::text from social_snapshots where target_id = ${targetId} order by stage`;
  return rows.map((r) => ({ ...r, captured_at: new Date(r.captured_at) }));
}

const at = (t0: Date, ms: number) => new Date(t0.getTime() + ms);
const readsOf = (postId: string) =>
  fake.requests.filter((r) => r.method === "GET" && r.path.includes(postId)).length;

describe("the collector's stages", () => {
  test("four stages over a simulated week (1 h, 24 h, 72 h, 7 d), then never read again", async () => {
    const p = await seedOrg();
    const reddit = await connect(p, "reddit");
    const { targets, publishedAt: t0 } = await publish(p, [reddit.id]);
    const target = targets[0]!;
    const adapters = createPlatformAdapters(ctx);
    const pass = (ms: number) => captureDueSnapshots(ctx, adapters, { now: at(t0, ms) });

    expect((await pass(HOUR / 2)).captured).toBe(0);
    expect(await snapshotsOf(target.id)).toEqual([]);
    const plan: [number, number, number][] = [
      [HOUR, 1, 10],
      [24 * HOUR, 2, 50],
      [72 * HOUR, 3, 80],
      [7 * 24 * HOUR, 4, 95],
    ];
    for (const [ms, stage, score] of plan) {
      fake.setMetrics(target.platform_post_id, { score });
      expect((await pass(ms)).captured).toBe(1);
      // An hour later the same stage is not taken again.
      expect((await pass(ms + HOUR)).captured).toBe(0);
      const snaps = await snapshotsOf(target.id);
      expect(snaps.map((s) => s.stage)).toEqual(plan.filter((x) => x[1] <= stage).map((x) => x[1]));
      expect(snaps.at(-1)!.likes).toBe(score);
      expect(snaps.at(-1)!.captured_at.toISOString()).toBe(at(t0, ms).toISOString());
    }
    const [row] = await handle.sql`select next_stage from social_targets where id = ${target.id}`;
    expect(row!.next_stage).toBe(5);
    const readsAfterWeek = readsOf(target.platform_post_id);
    expect(readsAfterWeek).toBe(4);
    await pass(30 * 24 * HOUR);
    expect(readsOf(target.platform_post_id)).toBe(4);
  });

  test("a stage missed while the collector was down is taken late with its real capturedAt", async () => {
    const p = await seedOrg();
    const li = await connect(p, "linkedin");
    const { targets, publishedAt: t0 } = await publish(p, [li.id]);
    const adapters = createPlatformAdapters(ctx);
    await captureDueSnapshots(ctx, adapters, { now: at(t0, HOUR + 5 * 60_000) });
    await captureDueSnapshots(ctx, adapters, { now: at(t0, 30 * HOUR) });
    const snaps = await snapshotsOf(targets[0]!.id);
    expect(snaps.map((s) => [s.stage, s.captured_at.toISOString()])).toEqual([
      [1, at(t0, HOUR + 5 * 60_000).toISOString()],
      [2, at(t0, 30 * HOUR).toISOString()],
    ]);
  });

  test("down across several stages: one reading, stored as the latest due stage (no copies for the skipped ones)", async () => {
    const p = await seedOrg();
    const li = await connect(p, "linkedin");
    const { targets, publishedAt: t0 } = await publish(p, [li.id]);
    await captureDueSnapshots(ctx, createPlatformAdapters(ctx), { now: at(t0, 80 * HOUR) });
    expect((await snapshotsOf(targets[0]!.id)).map((s) => s.stage)).toEqual([3]);
    const [row] = await handle.sql`select next_stage from social_targets where id = ${targets[0]!.id}`;
    expect(row!.next_stage).toBe(4);
  });
});

describe("the collector under load and failure", () => {
  test("two collectors at once: never two snapshots for one stage, and each target read once", async () => {
    const slow = startFakePlatforms({ latencyMs: 15 });
    try {
      const config = loadConfig({
        SECRET_KEY: "test-secret-key-0123456789",
        DATA_DIR: "/tmp/site-test-data",
        ...slow.env,
      });
      const adapters = createPlatformAdapters({ ...ctx, config });
      const p = await seedOrg();
      const reddit = await connect(p, "reddit");
      const x = await connect(p, "x", { tier: "basic" });
      const posts = [];
      for (let i = 0; i < 15; i++) posts.push(await publish(p, [reddit.id, x.id], adapters));
      const now = at(posts.at(-1)!.publishedAt, 2 * HOUR);
      const c = { ...ctx, config };
      const [a, b] = await Promise.all([
        captureDueSnapshots(c, adapters, { now, batchSize: 4 }),
        captureDueSnapshots(c, adapters, { now, batchSize: 4 }),
      ]);
      expect(a.captured + b.captured).toBe(30);
      expect(a.captured).toBeGreaterThan(0);
      expect(b.captured).toBeGreaterThan(0);
      const ids = posts.flatMap((x) => x.targets.map((t) => t.id));
      const rows = await handle.sql<{ target_id: string; stage: number; n: number }[]>`
        select target_id, stage, count(*)::int as n from social_snapshots where target_id = any(${ids}::uuid[])
        group by target_id, stage`;
      expect(rows.length).toBe(30);
      expect(rows.every((r) => r.n === 1 && r.stage === 1)).toBe(true);
      expect(slow.requests.filter((r) => r.method === "GET").length).toBe(30);
    } finally {
      slow.close();
    }
  });

  test("concurrency per platform is bounded", async () => {
    const slow = startFakePlatforms({ latencyMs: 25 });
    try {
      const config = loadConfig({
        SECRET_KEY: "test-secret-key-0123456789",
        DATA_DIR: "/tmp/site-test-data",
        ...slow.env,
      });
      const adapters = createPlatformAdapters({ ...ctx, config });
      const p = await seedOrg();
      const reddit = await connect(p, "reddit");
      let last: Date = new Date();
      for (let i = 0; i < 20; i++) last = (await publish(p, [reddit.id], adapters)).publishedAt;
      const report = await captureDueSnapshots({ ...ctx, config }, adapters, {
        now: at(last, 2 * HOUR),
        concurrency: 3,
      });
      expect(report.captured).toBe(20);
      expect(slow.maxInFlight.get("reddit")).toBeLessThanOrEqual(3);
      expect(slow.maxInFlight.get("reddit")).toBeGreaterThanOrEqual(2);
    } finally {
      slow.close();
    }
  });

  test("a 429 is waited out for its retry-after, then the target is read", async () => {
    const p = await seedOrg();
    const reddit = await connect(p, "reddit");
    const { targets, publishedAt: t0 } = await publish(p, [reddit.id]);
    fake.failNext("reddit", 1, 429, 1);
    const start = fake.requests.length;
    const report = await captureDueSnapshots(ctx, createPlatformAdapters(ctx), {
      now: at(t0, 2 * HOUR),
    });
    expect(report.captured).toBeGreaterThanOrEqual(1);
    expect((await snapshotsOf(targets[0]!.id)).length).toBe(1);
    const calls = fake.requests.slice(start).filter((r) => r.platform === "reddit");
    expect(calls.length).toBe(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test("a retry-after longer than a pass may wait leaves the target for the next pass", async () => {
    const p = await seedOrg();
    const reddit = await connect(p, "reddit");
    const { targets, publishedAt: t0 } = await publish(p, [reddit.id]);
    fake.failNext("reddit", 1, 429, 600);
    const adapters = createPlatformAdapters(ctx);
    const first = await captureDueSnapshots(ctx, adapters, { now: at(t0, 2 * HOUR), maxRetryWaitMs: 1000 });
    expect(first.deferred).toBeGreaterThanOrEqual(1);
    expect(await snapshotsOf(targets[0]!.id)).toEqual([]);
    await captureDueSnapshots(ctx, adapters, { now: at(t0, 3 * HOUR) });
    expect((await snapshotsOf(targets[0]!.id)).map((s) => s.stage)).toEqual([1]);
  });

  test("one failing account never stops the rest: expired token → null metrics with the reason, 5xx → retried next pass", async () => {
    const p = await seedOrg();
    const expired = await connect(p, "threads", {
      token: "tok-expired-ig",
      permissions: ["threads_manage_insights"],
    });
    const li = await connect(p, "linkedin");
    const reddit = await connect(p, "reddit");
    const { targets, publishedAt: t0 } = await publish(p, [expired.id, li.id, reddit.id]);
    fake.expire("tok-expired-ig");
    fake.failNext("linkedin", 5, 503);
    const adapters = createPlatformAdapters(ctx);
    await captureDueSnapshots(ctx, adapters, { now: at(t0, 2 * HOUR) });
    const [ig, lk, rd] = await Promise.all(targets.map((t) => snapshotsOf(t.id)));
    expect(rd!.length).toBe(1);
    expect(lk).toEqual([]);
    const [igSnap] =
      await handle.sql`select views, likes, extra from social_snapshots where target_id = ${targets[0]!.id}`;
    expect(ig!.length).toBe(1);
    expect(igSnap!.likes).toBeNull();
    expect(igSnap!.extra.unavailable.likes).toBe("token_invalid");
    fake.failNext("linkedin", 0);
    await captureDueSnapshots(ctx, adapters, { now: at(t0, 3 * HOUR) });
    expect((await snapshotsOf(targets[1]!.id)).length).toBe(1);
  });
});

describe("a Reddit target published with a pending id (decision 1015)", () => {
  test("a pass finds the post on the listing, stores its figures and gives the target its real id and address", async () => {
    const p = await seedOrg();
    const owner = `owner${Math.random().toString(36).slice(2, 8)}`;
    const adapters = createPlatformAdapters(ctx);
    // The image post, made on Reddit while the account's token could not read its listing.
    const early = fake.issueTokens("reddit", ["identity", "submit", "read"]);
    const image = sampleImage("jpeg", { size: 300 });
    const made = await adapters.reddit!.publish(
      {
        platform: "reddit",
        accountId: owner,
        displayName: null,
        accessToken: early.accessToken,
        permissions: [],
        tier: null,
      },
      {
        text: "launch day",
        media: [
          {
            kind: "image",
            contentType: "image/jpeg",
            size: image.byteLength,
            url: fake.host(image, "image/jpeg"),
            read: async () => image,
          },
        ],
      },
    );
    expect(made.platformPostId).toBe("submitted:launch day");
    // The account as it is now: reconnected with the history scope connect asks for.
    const now = fake.issueTokens("reddit", OAUTH.reddit.scopes);
    const { account } = await connectSocialAccount(ctx, p, {
      platform: "reddit",
      accountId: owner,
      accessToken: now.accessToken,
      permissions: [],
    });
    const { targets, publishedAt: t0 } = await publish(p, [account.id], adapters);
    await handle.sql`update social_targets set platform_post_id = ${made.platformPostId}, url = ${made.url}
      where id = ${targets[0]!.id}`;
    await captureDueSnapshots(ctx, adapters, { now: at(t0, HOUR) });
    const [row] = await handle.sql<{ platform_post_id: string; url: string }[]>`
      select platform_post_id, url from social_targets where id = ${targets[0]!.id}`;
    expect(row!.platform_post_id).toMatch(/^t3_/);
    expect(row!.url).toBe(
      `https://www.reddit.com/r/u_${owner}/comments/${row!.platform_post_id.slice(3)}/post/`,
    );
    expect((await snapshotsOf(targets[0]!.id)).map((s) => [s.stage, s.likes])).toEqual([[1, 55]]);
    // The next stage reads the post by its id (/api/info), no longer through the listing.
    const before = fake.requests.length;
    await captureDueSnapshots(ctx, adapters, { now: at(t0, 24 * HOUR) });
    expect((await snapshotsOf(targets[0]!.id)).map((s) => s.stage)).toEqual([1, 2]);
    const mine = fake.requests
      .slice(before)
      .filter((r) => r.path.includes(row!.platform_post_id) || r.path.includes(owner))
      .map((r) => r.path);
    expect([...new Set(mine)]).toEqual([`/api/info?id=${row!.platform_post_id}&raw_json=1`]);
  });
});

describe("bun run apps/metrics --once --now", () => {
  test("the CLI runs one pass as if the clock read --now", async () => {
    const p = await seedOrg();
    const reddit = await connect(p, "reddit");
    const { targets, publishedAt: t0 } = await publish(p, [reddit.id]);
    const now = at(t0, 25 * HOUR).toISOString();
    const proc = Bun.spawn(["bun", "run", "apps/metrics", "--once", "--now", now], {
      cwd: `${import.meta.dir}/../../..`,
      env: {
        ...process.env,
        ...fake.env,
        DATABASE_URL: handle.url,
        SECRET_KEY: "test-secret-key-0123456789",
        DATA_DIR: "/tmp/site-test-data",
        REDIS_URL: "",
        LOG_LEVEL: "error",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect({ code, err: code === 0 ? "" : err }).toEqual({ code: 0, err: "" });
    const report = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(report.now).toBe(now);
    expect(report.captured).toBeGreaterThanOrEqual(1);
    const snaps = await snapshotsOf(targets[0]!.id);
    expect(snaps.map((s) => [s.stage, s.captured_at.toISOString()])).toEqual([[2, now]]);
  }, 30_000);
});
