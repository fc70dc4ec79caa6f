import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fixedClock } from "@site/config";
import { sweepSocialTargets } from "@site/domain/social";
import { sampleImage } from "@site/domain/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Social posts on their own clock (issue 33): scheduled posts, PATCH/cancel/DELETE, the calendar and
// rate-limit waits, on a clock the test moves by days; publishing by the app's own social publisher.
type Json = any;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let h: TestApp;
let fake: FakePlatforms;
const clock = fixedClock(new Date());

beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({
    env: {
      ...fake.env,
      SOCIAL_PUBLISH_WAIT_S: "2",
      SOCIAL_PUBLISH_RETRY_WINDOW_S: "1800",
      SOCIAL_POLL_INTERVAL_MS: "1000",
      FETCH_ALLOW_HOSTS: "127.0.0.1:9",
    },
    clock,
  });
  fetchMediaFromApp(fake, h);
});
afterAll(async () => {
  await h.close();
  fake.close();
});

const later = (ms: number, offset = "+01:00") => {
  // The same instant written with an offset (ISO 8601: local time and its offset from UTC).
  const d = new Date(clock.now().getTime() + ms);
  const sign = offset.startsWith("-") ? -1 : 1;
  const [hh, mm] = offset.slice(1).split(":").map(Number);
  const local = new Date(d.getTime() + sign * (hh! * HOUR + mm! * MIN));
  return `${local.toISOString().slice(0, 23)}${offset}`;
};
const create = (key: string, body: Json) => h.call("POST", "/api/v1/social/posts", { key, body });
const read = async (key: string, id: string) =>
  ((await (await h.call("GET", `/api/v1/social/posts/${id}`, { key })).json()) as Json).post;
const xPosts = (text: string) => fake.postsWithText("x", text);

/** Runs a sweep at the clock's time and waits until the post has no target still working. */
async function sweepUntilSettled(key: string, id: string, ms = 20_000) {
  await sweepSocialTargets(h.ctx);
  const deadline = Date.now() + ms;
  for (;;) {
    const post = await read(key, id);
    if (!post.targets.some((t: Json) => t.status === "scheduled" || t.status === "publishing")) return post;
    if (Date.now() > deadline) return post;
    await Bun.sleep(50);
  }
}

/** Gives the publisher time to do what it would (something that must not happen). */
async function sweepAndSettle() {
  await sweepSocialTargets(h.ctx);
  await Bun.sleep(400);
}

describe("scheduledAt", () => {
  test("no offset, in the past, now, or more than 365 days ahead → 400 naming scheduledAt; 364 days → 201", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const noOffset = new Date(clock.now().getTime() + DAY).toISOString().slice(0, 19);
    for (const at of [
      noOffset,
      later(-MIN),
      later(0),
      later(366 * DAY),
      "tomorrow",
      "2026-13-01T09:00:00Z",
    ]) {
      const res = await create(key, { content: "when?", accounts: [x.id], scheduledAt: at });
      expect(res.status).toBe(400);
      const body = (await res.json()) as Json;
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(body.error)).toContain("scheduledAt");
    }
    const ok = await create(key, { content: "next year", accounts: [x.id], scheduledAt: later(364 * DAY) });
    expect(ok.status).toBe(201);
  });

  test("the checks run at creation: a text too long for X → 400 and nothing stored", async () => {
    const { key, org } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const res = await create(key, { content: "a".repeat(281), accounts: [x.id], scheduledAt: later(DAY) });
    expect(res.status).toBe(400);
    const [n] = await h.sql`select count(*)::int as n from social_posts where org_id = ${org.id}`;
    expect(n!.n).toBe(0);
  });
});

describe("a scheduled post", () => {
  test("scheduled three days ahead: nothing before its time, out once at its time, published with its URL", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `Thursday 9:00 ${crypto.randomUUID()}`;
    const res = await create(key, { content: text, accounts: [x.id], scheduledAt: later(3 * DAY) });
    expect(res.status).toBe(201);
    const { post } = (await res.json()) as Json;
    expect(post).toMatchObject({ status: "scheduled", publishedAt: null, warnings: [] });
    expect(new Date(post.scheduledAt).getTime()).toBe(new Date(later(3 * DAY)).getTime());
    expect(post.targets).toEqual([
      { platform: "x", accountId: x.id, url: null, status: "scheduled", error: null, note: null },
    ]);

    await sweepAndSettle();
    clock.advance(2 * DAY);
    await sweepAndSettle();
    expect(xPosts(text)).toHaveLength(0);
    expect((await read(key, post.postId)).status).toBe("scheduled");

    clock.advance(DAY + 1000);
    const done = await sweepUntilSettled(key, post.postId);
    expect(done.status).toBe("done");
    expect(done.targets[0]).toMatchObject({ status: "published", error: null });
    expect(done.targets[0].url).toBe(`https://x.com/i/web/status/${xPosts(text)[0]}`);
    expect(done.publishedAt).not.toBeNull();
    // Later sweeps, days later: never twice.
    clock.advance(DAY);
    await sweepAndSettle();
    await sweepAndSettle();
    expect(xPosts(text)).toHaveLength(1);
  });

  test("PATCH while scheduled → 200, checked again (400 for a text too long); after publishing began → 409", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const reddit = await connectSocialAccount(h, key, "reddit");
    const { post } = (await (
      await create(key, { content: "draft", accounts: [x.id], scheduledAt: later(DAY) })
    ).json()) as Json;
    const text = `final words ${crypto.randomUUID()}`;
    const patched = await h.call("PATCH", `/api/v1/social/posts/${post.postId}`, {
      key,
      body: { content: text, accounts: [x.id, reddit.id], scheduledAt: later(2 * DAY, "-05:00") },
    });
    expect(patched.status).toBe(200);
    const p = ((await patched.json()) as Json).post;
    expect(p).toMatchObject({ content: text, status: "scheduled" });
    expect(p.targets.map((t: Json) => [t.platform, t.status])).toEqual([
      ["x", "scheduled"],
      ["reddit", "scheduled"],
    ]);
    expect(new Date(p.scheduledAt).getTime()).toBe(new Date(later(2 * DAY)).getTime());
    const tooLong = await h.call("PATCH", `/api/v1/social/posts/${post.postId}`, {
      key,
      body: { content: "b".repeat(281) },
    });
    expect(tooLong.status).toBe(400);
    const past = await h.call("PATCH", `/api/v1/social/posts/${post.postId}`, {
      key,
      body: { scheduledAt: later(-HOUR) },
    });
    expect(past.status).toBe(400);
    expect((await read(key, post.postId)).content).toBe(text);

    clock.advance(2 * DAY + 1000);
    const done = await sweepUntilSettled(key, post.postId);
    expect(done.targets.map((t: Json) => t.status)).toEqual(["published", "published"]);
    expect(xPosts(text)).toHaveLength(1);
    const late = await h.call("PATCH", `/api/v1/social/posts/${post.postId}`, {
      key,
      body: { content: "too late" },
    });
    expect(late.status).toBe(409);
    expect(((await late.json()) as Json).error.code).toBe("CONFLICT");
    expect((await h.call("POST", `/api/v1/social/posts/${post.postId}/cancel`, { key })).status).toBe(409);
    expect((await h.call("DELETE", `/api/v1/social/posts/${post.postId}`, { key })).status).toBe(409);
  });

  test("cancel → 200 and it never goes out; DELETE of a cancelled or scheduled post → 204; another org's → 404", async () => {
    const { key } = await h.seedOrg();
    const other = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `cancelled ${crypto.randomUUID()}`;
    const a = (
      (await (
        await create(key, { content: text, accounts: [x.id], scheduledAt: later(HOUR) })
      ).json()) as Json
    ).post;
    const b = (
      (await (
        await create(key, { content: "kept, then deleted", accounts: [x.id], scheduledAt: later(HOUR) })
      ).json()) as Json
    ).post;
    expect((await h.call("POST", `/api/v1/social/posts/${a.postId}/cancel`, { key: other.key })).status).toBe(
      404,
    );
    const cancelled = await h.call("POST", `/api/v1/social/posts/${a.postId}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    const c = ((await cancelled.json()) as Json).post;
    expect(c.status).toBe("cancelled");
    expect(c.targets.map((t: Json) => t.status)).toEqual(["cancelled"]);
    expect(
      (await h.call("PATCH", `/api/v1/social/posts/${a.postId}`, { key, body: { content: "x" } })).status,
    ).toBe(409);
    clock.advance(2 * HOUR);
    await sweepAndSettle();
    expect(xPosts(text)).toHaveLength(0);
    expect((await h.call("DELETE", `/api/v1/social/posts/${a.postId}`, { key })).status).toBe(204);
    expect((await h.call("GET", `/api/v1/social/posts/${a.postId}`, { key })).status).toBe(404);
    // b fell due during the sweep above and went out; a fresh scheduled one is deleted before its time.
    const d = (
      (await (
        await create(key, { content: "deleted early", accounts: [x.id], scheduledAt: later(HOUR) })
      ).json()) as Json
    ).post;
    expect((await h.call("DELETE", `/api/v1/social/posts/${d.postId}`, { key: other.key })).status).toBe(404);
    expect((await h.call("DELETE", `/api/v1/social/posts/${d.postId}`, { key })).status).toBe(204);
    clock.advance(2 * HOUR);
    await sweepAndSettle();
    expect(xPosts("deleted early")).toHaveLength(0);
    expect((await sweepUntilSettled(key, b.postId)).status).toBe("done");
  });

  test("an account that turned reconnect_required before the post's time: a warning, then the target fails at its time", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const { post } = (await (
      await create(key, { content: "warned", accounts: [x.id], scheduledAt: later(DAY) })
    ).json()) as Json;
    await h.sql`update social_accounts set status = 'reconnect_required' where id = ${x.id}`;
    const warned = await read(key, post.postId);
    expect(warned.warnings).toEqual([
      {
        code: "reconnect_required",
        accountId: x.id,
        platform: "x",
        message: expect.stringContaining("reconnect"),
      },
    ]);
    clock.advance(DAY + 1000);
    const done = await sweepUntilSettled(key, post.postId);
    expect(done).toMatchObject({ status: "done", warnings: [] });
    expect(done.targets[0].status).toBe("failed");
    expect(done.targets[0].error).toContain("reconnect");
  });
});

describe("the calendar: GET /api/v1/social/posts?status&from&to&limit&cursor", () => {
  test("by status and time (scheduled ones by scheduledAt), latest first, by pages", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const ids: string[] = [];
    for (const days of [3, 1, 2]) {
      const res = await create(key, {
        content: `in ${days} days`,
        accounts: [x.id],
        scheduledAt: later(days * DAY),
      });
      ids.push(((await res.json()) as Json).post.postId);
    }
    const now = await create(key, { content: `now ${crypto.randomUUID()}`, accounts: [x.id] });
    expect(now.status).toBe(201);
    const list = async (q: string) => {
      const res = await h.call("GET", `/api/v1/social/posts?${q}`, { key });
      expect(res.status).toBe(200);
      return (await res.json()) as Json;
    };
    const scheduled = await list("status=scheduled");
    expect(scheduled.posts.map((p: Json) => p.content)).toEqual(["in 3 days", "in 2 days", "in 1 days"]);
    const window = await list(
      `from=${encodeURIComponent(later(1.5 * DAY))}&to=${encodeURIComponent(later(2.5 * DAY))}`,
    );
    expect(window.posts.map((p: Json) => p.content)).toEqual(["in 2 days"]);
    const page1 = await list("status=scheduled&limit=2");
    expect(page1.posts).toHaveLength(2);
    const page2 = await list(`status=scheduled&limit=2&cursor=${page1.nextCursor}`);
    expect(page2.posts.map((p: Json) => p.content)).toEqual(["in 1 days"]);
    expect(page2.nextCursor).toBeNull();
    const done = await list("status=done");
    expect(done.posts).toHaveLength(1);
    expect((await h.call("GET", "/api/v1/social/posts?status=later", { key })).status).toBe(400);
    expect((await h.call("GET", "/api/v1/social/posts?from=yesterday", { key })).status).toBe(400);
  });
});

describe("waits the platform states", () => {
  test("X answers 429 with its reset: the target stays publishing, then goes out once after the wait", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const text = `after the wait ${crypto.randomUUID()}`;
    fake.failNext("x", 1, 429, 600);
    const res = await create(key, { content: text, accounts: [x.id] });
    expect(res.status).toBe(201);
    const { post } = (await res.json()) as Json;
    expect(post.status).toBe("publishing");
    expect(post.targets[0]).toMatchObject({ status: "publishing", url: null });
    expect(post.targets[0].error).toContain("rate limited by x");
    clock.advance(5 * MIN);
    await sweepAndSettle();
    expect(xPosts(text)).toHaveLength(0);
    clock.advance(6 * MIN);
    const done = await sweepUntilSettled(key, post.postId);
    expect(done.targets[0]).toMatchObject({ status: "published", error: null });
    expect(xPosts(text)).toHaveLength(1);
  });

  test("a wait past SOCIAL_PUBLISH_RETRY_WINDOW_S: failed with the platform's words", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    fake.failNext("x", 1, 429, 3600);
    const res = await create(key, { content: `never ${crypto.randomUUID()}`, accounts: [x.id] });
    const { post } = (await res.json()) as Json;
    expect(post.targets[0].status).toBe("failed");
    expect(post.targets[0].error).toContain("Too Many Requests");
    expect(post.targets[0].error).toContain("SOCIAL_PUBLISH_RETRY_WINDOW_S");
    expect(post.status).toBe("done");
  });

  test("a container the platform processes longer than SOCIAL_PUBLISH_WAIT_S: answered publishing, then published with its URL and its webhook", async () => {
    const o = await h.seedOrg({ scopes: ["social:write", "webhooks:write"] });
    const hook = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: "http://127.0.0.1:9/hook", events: ["social.post.published"] },
    });
    expect(hook.status).toBe(201);
    const ig = await connectSocialAccount(h, o.key, "instagram");
    const photo = await uploadSocialMedia(h, o.key, sampleImage("jpeg", { size: 400 }), "image/jpeg");
    fake.setProcessingChecks(4); // IN_PROGRESS four times, a second apart: about 4 s > 2 s
    try {
      const t0 = Date.now();
      const res = await create(o.key, { content: "slow to process", media: [photo.id], accounts: [ig.id] });
      expect(res.status).toBe(201);
      expect(Date.now() - t0).toBeLessThan(3500);
      const { post } = (await res.json()) as Json;
      expect(post.status).toBe("publishing");
      expect(post.targets[0]).toMatchObject({ status: "publishing", url: null });
      const done = await sweepUntilSettled(o.key, post.postId);
      expect(done.status).toBe("done");
      expect(done.targets[0].status).toBe("published");
      expect(done.targets[0].url).toStartWith("https://");
      const events = await h.sql`select type, data from webhook_events where org_id = ${o.org.id}`;
      expect(events.map((e) => e.type)).toEqual(["social.post.published"]);
      expect(events[0]!.data.target).toMatchObject({
        accountId: ig.id,
        status: "published",
        url: done.targets[0].url,
      });
    } finally {
      fake.setProcessingChecks(0);
    }
  });
});
