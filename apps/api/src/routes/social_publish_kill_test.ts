import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedClock } from "@site/config";
import { spawnChild } from "@site/db/testing";
import { publishTarget, sweepSocialTargets } from "@site/domain/social";
import { sampleImage } from "@site/domain/testing";
import { createPlatformAdapters } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Never twice, never lost (issue 33, decision 1471): a real publishing process SIGKILLed between the
// platform's answer and its commit; another process takes the target up and finds the post on the
// platform instead of posting it again.
type Json = any;
const ROOT = new URL("../../../..", import.meta.url).pathname;
const HOUR = 3_600_000;

let h: TestApp;
let fake: FakePlatforms;
let dataDir: string;
// This process's clock: two hours behind, so a post it schedules an hour ahead is already due for a
// process on the real clock (a post that fell due while every process was down).
const clock = fixedClock(new Date(Date.now() - 2 * HOUR));

beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env, clock, socialPublisher: false });
  fetchMediaFromApp(fake, h);
  fake.verifyTikTokUrlPrefix(`${h.ctx.config.publicBaseUrl}/api/media/`);
  dataDir = mkdtempSync(join(tmpdir(), "social-kill-"));
});
afterAll(async () => {
  await h.close();
  fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A publishing process as every API process and the daemon run it, on the real clock. */
function spawnPublisher() {
  return spawnChild("apps/api/testing/social_publisher_child.ts", {
    cwd: ROOT,
    env: {
      ...fake.env,
      DATABASE_URL: h.databaseUrl,
      REDIS_URL: "",
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      // The service's delivery prefix, verified with TikTok (photos are pulled from it).
      SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES: `${h.ctx.config.publicBaseUrl}/api/media/`,
    },
  });
}

async function until<T>(
  what: string,
  f: () => Promise<T | null | undefined | false>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

async function scheduledPost(key: string, accountId: string, text: string) {
  const at = new Date(clock.now().getTime() + HOUR).toISOString();
  const res = await h.call("POST", "/api/v1/social/posts", {
    key,
    body: { content: text, accounts: [accountId], scheduledAt: at },
  });
  expect(res.status).toBe(201);
  const { post } = (await res.json()) as Json;
  expect(post.status).toBe("scheduled");
  const [t] = await h.sql`select id from social_targets where post_id = ${post.postId}`;
  return { postId: post.postId as string, targetId: t!.id as string };
}

const tweetsPosted = (text: string) => fake.postsWithText("x", text);

describe("publishing survives its process being killed", () => {
  test("SIGKILL between X's answer and the commit: another process looks the post up and records it; posted exactly once", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `killed mid-publish ${crypto.randomUUID()}`;
    const { postId, targetId } = await scheduledPost(key, x.id, text);
    // X publishes the post, then its answer is held: the process is killed before it hears it.
    const hold = fake.holdAnswers("x", "POST", "tweets");
    const child = spawnPublisher();
    await child.ready;
    await until("X to publish the post", async () => hold.arrived() === 1);
    child.proc.kill("SIGKILL");
    await child.proc.exited;
    hold.release();
    expect(tweetsPosted(text)).toHaveLength(1);
    const [left] =
      await h.sql`select status, try_started_at, lease_until, url from social_targets where id = ${targetId}`;
    expect(left).toMatchObject({ status: "publishing", url: null });
    expect(left!.try_started_at).not.toBeNull();

    // Another process (this one, its clock past the dead process's lease) takes the target up.
    clock.set(new Date(Date.now() + 5 * 60_000));
    expect(await sweepSocialTargets({ ...h.ctx, queue: undefined })).toBeGreaterThanOrEqual(1);
    const outcome = await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId);
    expect(outcome).toEqual({ outcome: "published" });
    expect(tweetsPosted(text)).toHaveLength(1);
    expect(
      fake.requests.filter((r) => r.platform === "x" && r.method === "POST" && r.path === "/tweets"),
    ).toHaveLength(1);
    expect(
      fake.requests.some((r) => r.platform === "x" && r.path.startsWith(`/users/${x.accountId}/tweets`)),
    ).toBe(true);
    const got = (await (await h.call("GET", `/api/v1/social/posts/${postId}`, { key })).json()) as Json;
    expect(got.post.status).toBe("done");
    expect(got.post.targets[0]).toMatchObject({
      status: "published",
      url: `https://x.com/i/web/status/${tweetsPosted(text)[0]}`,
      error: null,
    });
    // Taking it up again changes nothing.
    expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
      outcome: "skipped",
      why: "ended",
    });
    expect(tweetsPosted(text)).toHaveLength(1);
  }, 60_000);

  // The same kill on every platform whose reference offers a way to look a post up (decision 1497):
  // the publishing call's answer held, the process killed, the target taken up by this process, which
  // finds the post on the account's list instead of posting it again.
  const lookups = [
    {
      platform: "reddit",
      hold: ["POST", "api/submit"],
      posts: "api/submit",
      lookup: (account: string) => `/user/${account}/submitted`,
      media: false,
    },
    {
      platform: "threads",
      hold: ["POST", "*threads_publish"],
      posts: "threads_publish",
      lookup: (account: string) => `/${account}/threads?`,
      media: false,
    },
    {
      platform: "linkedin",
      hold: ["POST", "rest/posts"],
      posts: "rest/posts",
      lookup: () => "/rest/posts?",
      media: false,
    },
    {
      platform: "instagram",
      hold: ["POST", "*media_publish"],
      posts: "media_publish",
      lookup: (account: string) => `/${account}/media?`,
      media: true,
    },
    {
      // Held: the status answer that says PUBLISH_COMPLETE; looked up by the publish id kept at init.
      platform: "tiktok",
      hold: ["POST", "post/publish/status/fetch"],
      posts: "content/init/",
      lookup: () => "/post/publish/status/fetch",
      media: true,
    },
  ] as const;
  for (const p of lookups)
    test(`SIGKILL between ${p.platform}'s answer and the commit: looked up on the account's posts, recorded, posted exactly once`, async () => {
      clock.set(new Date(Date.now() - 2 * HOUR));
      const { key } = await h.seedOrg();
      const account = await connectSocialAccount(h, key, p.platform);
      const text = `killed mid-publish on ${p.platform} ${crypto.randomUUID()}`;
      const media = p.media
        ? [(await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 400 }), "image/jpeg")).id]
        : [];
      const at = new Date(clock.now().getTime() + HOUR).toISOString();
      const res = await h.call("POST", "/api/v1/social/posts", {
        key,
        body: {
          content: text,
          accounts: [account.id],
          scheduledAt: at,
          media,
          ...(p.platform === "tiktok"
            ? { platformOptions: { tiktok: { privacyLevel: "SELF_ONLY", consent: true } } }
            : {}),
        },
      });
      expect(res.status).toBe(201);
      const { post } = (await res.json()) as Json;
      const [{ id: targetId }] = await h.sql`select id from social_targets where post_id = ${post.postId}`;
      const hold = fake.holdAnswers(p.platform, p.hold[0], p.hold[1]);
      const child = spawnPublisher();
      try {
        await child.ready;
        await until(`${p.platform} to publish the post`, async () => hold.arrived() === 1);
      } finally {
        child.proc.kill("SIGKILL");
        await child.proc.exited;
        hold.release();
      }
      const posted = fake.postsWithText(p.platform, text);
      expect(posted).toHaveLength(1);
      const [left] = await h.sql`select status, try_started_at from social_targets where id = ${targetId}`;
      expect(left!.status).toBe("publishing");
      expect(left!.try_started_at).not.toBeNull();

      clock.set(new Date(Date.now() + 5 * 60_000));
      const calls = () =>
        fake.requests.filter(
          (r) => r.platform === p.platform && r.method === "POST" && r.path.split("?")[0]!.endsWith(p.posts),
        ).length;
      expect(calls()).toBe(1);
      expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
        outcome: "published",
      });
      expect(fake.postsWithText(p.platform, text)).toHaveLength(1);
      expect(calls()).toBe(1);
      expect(
        fake.requests.some((r) => r.platform === p.platform && r.path.includes(p.lookup(account.accountId))),
      ).toBe(true);
      const [t] =
        await h.sql`select status, platform_post_id, error from social_targets where id = ${targetId}`;
      expect(t).toMatchObject({ status: "published", platform_post_id: posted[0], error: null });
      expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
        outcome: "skipped",
        why: "ended",
      });
    }, 60_000);

  test("a cut-off LinkedIn try whose lookup LinkedIn refuses (no r_member_social): failed, saying why, not posted again", async () => {
    clock.set(new Date(Date.now() - 2 * HOUR));
    const { key } = await h.seedOrg();
    const token = `tok-linkedin-${crypto.randomUUID()}`;
    const li = await connectSocialAccount(h, key, "linkedin", { accessToken: token });
    fake.deny(token, "r_member_social");
    const text = `cut off, no lookup ${crypto.randomUUID()}`;
    const { targetId } = await scheduledPost(key, li.id, text);
    await h.sql`update social_targets set status = 'publishing', tries = 1, try_started_at = now(),
      lease_token = gen_random_uuid(), lease_until = now() + interval '2 minutes' where id = ${targetId}`;
    clock.set(new Date(Date.now() + 5 * 60_000));
    expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
      outcome: "failed",
    });
    const [t] = await h.sql`select status, error from social_targets where id = ${targetId}`;
    expect(t!.status).toBe("failed");
    expect(t!.error).toContain("could not be looked up on linkedin");
    expect(t!.error).toContain("ACCESS_DENIED");
    expect(fake.postsWithText("linkedin", text)).toHaveLength(0);
    expect(
      fake.requests.some((r) => r.platform === "linkedin" && r.method === "POST" && r.token === token),
    ).toBe(false);
  });

  test("sweeps in different periods queue a scheduled try once, under the id of its due time; once due, one more", async () => {
    // 14 s into a 15-s sweep period: the next sweep, 6 s later, is in the next period (decision 1496).
    clock.set(new Date(Math.floor(Date.now() / 15_000) * 15_000 - 2 * HOUR + 14_000));
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const at = new Date(clock.now().getTime() + 14_000);
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: {
        content: `queued once ${crypto.randomUUID()}`,
        accounts: [x.id],
        scheduledAt: at.toISOString(),
      },
    });
    expect(res.status).toBe(201);
    const { post } = (await res.json()) as Json;
    const [{ id: targetId }] = await h.sql`select id from social_targets where post_id = ${post.postId}`;
    const queue = h.ctx.queue!;
    const before = await queue.depth("social-publish");
    await sweepSocialTargets(h.ctx);
    clock.set(new Date(clock.now().getTime() + 6_000));
    await sweepSocialTargets(h.ctx);
    expect(await queue.depth("social-publish")).toBe(before + 1);
    expect(await queue.state("social-publish", `${targetId}.0.t${at.getTime()}`)).toBe("delayed");
    // Due now by this clock (its delayed job waits on the real one): a sweep queues it once more, once.
    clock.set(new Date(at.getTime() + 1_000));
    await sweepSocialTargets(h.ctx);
    await sweepSocialTargets(h.ctx);
    expect(await queue.state("social-publish", `${targetId}.0.d${at.getTime()}`)).not.toBe("missing");
    expect(await queue.depth("social-publish")).toBe(before + 2);
    await queue.remove("social-publish", `${targetId}.0.t${at.getTime()}`);
    await queue.remove("social-publish", `${targetId}.0.d${at.getTime()}`);
  });

  test("a TikTok try cut off before TikTok answered its publish_id: failed, saying why, not posted again", async () => {
    clock.set(new Date(Date.now() - 2 * HOUR));
    const { key } = await h.seedOrg();
    const tk = await connectSocialAccount(h, key, "tiktok");
    const text = `cut off before init ${crypto.randomUUID()}`;
    const photo = await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 400 }), "image/jpeg");
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: {
        content: text,
        accounts: [tk.id],
        media: [photo.id],
        scheduledAt: new Date(clock.now().getTime() + HOUR).toISOString(),
        platformOptions: { tiktok: { privacyLevel: "SELF_ONLY", consent: true } },
      },
    });
    expect(res.status).toBe(201);
    const { post } = (await res.json()) as Json;
    const [{ id: targetId }] = await h.sql`select id from social_targets where post_id = ${post.postId}`;
    await h.sql`update social_targets set status = 'publishing', tries = 1, try_started_at = now(),
      lease_token = gen_random_uuid(), lease_until = now() + interval '2 minutes' where id = ${targetId}`;
    clock.set(new Date(Date.now() + 5 * 60_000));
    const before = fake.requests.length;
    expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
      outcome: "failed",
    });
    const [t] = await h.sql`select status, error from social_targets where id = ${targetId}`;
    expect(t!.status).toBe("failed");
    expect(t!.error).toContain("before TikTok answered its publish_id");
    expect(fake.requests.slice(before).some((r) => r.platform === "tiktok" && r.path.includes("init"))).toBe(
      false,
    );
    expect(fake.postsWithText("tiktok", text)).toHaveLength(0);
  });

  test("a scheduled post due while every process was down goes out when one starts, once, even when another starts after", async () => {
    clock.set(new Date(Date.now() - 2 * HOUR));
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `due while down ${crypto.randomUUID()}`;
    const { targetId } = await scheduledPost(key, x.id, text);
    const first = spawnPublisher();
    await first.ready;
    await until("the target to be published", async () => {
      const [t] = await h.sql`select status from social_targets where id = ${targetId}`;
      return t!.status === "published";
    });
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const second = spawnPublisher();
    await second.ready;
    // The second process's startup sweep has run once its ready line is out and a sweep period passed.
    await Bun.sleep(1500);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    expect(tweetsPosted(text)).toHaveLength(1);
  }, 60_000);

  test("a try cut off before it reached X (marked begun, nothing on X): looked up, not found, posted once", async () => {
    clock.set(new Date(Date.now() - 2 * HOUR));
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `never reached ${crypto.randomUUID()}`;
    const { targetId } = await scheduledPost(key, x.id, text);
    // What a process killed right after committing the start of its try leaves behind.
    await h.sql`update social_targets set status = 'publishing', tries = 1, try_started_at = now(),
      lease_token = gen_random_uuid(), lease_until = now() + interval '2 minutes' where id = ${targetId}`;
    clock.set(new Date(Date.now() + 5 * 60_000));
    const before = fake.requests.length;
    expect(await publishTarget(h.ctx, createPlatformAdapters(h.ctx), targetId)).toEqual({
      outcome: "published",
    });
    const calls = fake.requests.slice(before).map((r) => `${r.method} ${r.path.split("?")[0]}`);
    expect(calls).toEqual([`GET /users/${x.accountId}/tweets`, "POST /tweets"]);
    expect(tweetsPosted(text)).toHaveLength(1);
  });
});
