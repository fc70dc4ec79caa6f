import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sampleImage } from "@site/domain/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Issue 33 through POST /api/v1/social/posts against the strict fakes: a rate-limit wait the platform
// states is waited out by the target's job and the post goes out once; a longer one keeps the target
// publishing until the stated time (never a permanent refusal); an unaudited TikTok post is published
// without a public URL and says why.

let h: TestApp;
let fake: FakePlatforms;
beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({
    env: {
      ...fake.env,
      SOCIAL_POLL_INTERVAL_MS: "5",
      // The POST's own wait for its targets (the 1-second break is slept through well within it).
      SOCIAL_PUBLISH_WAIT_S: "8",
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
const post = async (key: string, body: Json) => {
  const res = await h.call("POST", "/api/v1/social/posts", { key, body });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).post;
};
const submits = (token: string) =>
  fake.requests.filter((r) => r.platform === "reddit" && r.path === "/api/submit" && r.token === token);

describe("rate-limit waits in today's publishing path", () => {
  test("Reddit's RATELIMIT 'take a break for 1 second' inside a 200: slept through, posted once", async () => {
    const { key } = await h.seedOrg();
    const reddit = await connectSocialAccount(h, key, "reddit");
    fake.redditRatelimitNext(
      1,
      "Looks like you've been doing that a lot. Take a break for 1 second before trying again.",
    );
    const created = await post(key, { content: "after the break", accounts: [reddit.id] });
    expect(created.targets[0]).toMatchObject({ platform: "reddit", status: "published", error: null });
    const [row] = await h.sql<{ platform_post_id: string; token: string }[]>`
      select platform_post_id from social_targets where post_id = ${created.postId}`;
    expect(fake.publishedText(row!.platform_post_id)).toBe("after the break");
    const tokens = new Set(fake.requests.filter((r) => r.platform === "reddit").map((r) => r.token));
    expect([...tokens].map((t) => submits(t).length).reduce((a, b) => a + b, 0)).toBe(2);
  });

  test("'try again in 9 minutes': the target stays publishing and is tried again after Reddit's wait (not a permanent refusal)", async () => {
    const { key } = await h.seedOrg();
    const reddit = await connectSocialAccount(h, key, "reddit");
    fake.redditRatelimitNext(1, "you are doing that too much. try again in 9 minutes.");
    const created = await post(key, { content: "too soon", accounts: [reddit.id] });
    expect(created.status).toBe("publishing");
    expect(created.targets[0].status).toBe("publishing");
    expect(created.targets[0].error).toContain("rate limited by reddit");
    // PRAW's reading: 9 minutes and one second from Reddit's answer (decision 1490).
    const [row] = await h.sql<{ wait_s: number }[]>`
      select extract(epoch from next_try_at - now())::float8 as wait_s
      from social_targets where post_id = ${created.postId}`;
    expect(row!.wait_s).toBeGreaterThan(541 - 60);
    expect(row!.wait_s).toBeLessThanOrEqual(541);
  });
});

describe("TikTok on an unaudited app", () => {
  test("the private (SELF_ONLY) post is published without a public URL, its note says why; the list says the same", async () => {
    const { key } = await h.seedOrg();
    const tiktok = await connectSocialAccount(h, key, "tiktok");
    const id = (await uploadSocialMedia(h, key, sampleImage("jpeg", { size: 2048 }), "image/jpeg")).id;
    const created = await post(key, { content: "private", media: [id], accounts: [tiktok.id] });
    expect(created.targets[0]).toMatchObject({
      platform: "tiktok",
      status: "published",
      url: null,
      error: null,
    });
    expect(created.targets[0].note).toContain("SELF_ONLY");
    expect(created.targets[0].note).toContain("not audited");
    const got = await h.call("GET", `/api/v1/social/posts/${created.postId}`, { key });
    expect(((await got.json()) as Json).post.targets[0]).toMatchObject({
      url: null,
      note: created.targets[0].note,
    });
  });
});
