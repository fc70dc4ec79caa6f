import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { createBullQueue, type JobQueue } from "@site/queue";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount } from "../../testing/social.ts";

// Social targets as BullMQ jobs on the real Redis (decision 1470), on the real clock: an immediate post,
// and a rate-limit wait queued as a delayed job that BullMQ runs at its time.
type Json = any;
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let h: TestApp;
let fake: FakePlatforms;
let queue: JobQueue;
beforeAll(async () => {
  fake = startFakePlatforms();
  queue = createBullQueue({
    redisUrl,
    log: createLogger("silent" as never),
    prefix: `social-test-${Date.now().toString(36)}`,
  });
  h = await buildTestApp({ queue, env: { ...fake.env, SOCIAL_PUBLISH_WAIT_S: "10" } });
});
afterAll(async () => {
  await h.close();
  fake.close();
});

describe("social publishing on BullMQ", () => {
  test("a post's targets go out through BullMQ; a 429 with a 2 s wait goes out once after it (a delayed BullMQ job), within the answer's wait", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const first = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: "via Redis", accounts: [x.id] },
    });
    expect(((await first.json()) as Json).post.targets[0].status).toBe("published");

    const text = `after two seconds ${crypto.randomUUID()}`;
    fake.failNext("x", 1, 429, 2);
    const res = await h.call("POST", "/api/v1/social/posts", {
      key,
      body: { content: text, accounts: [x.id] },
    });
    const { post } = (await res.json()) as Json;
    // The delayed job runs after the stated wait, within the answer's 10 s.
    expect(post.targets[0]).toMatchObject({ status: "published", error: null });
    expect(fake.postsWithText("x", text)).toHaveLength(1);
    const tries = fake.requests.filter(
      (r) => r.platform === "x" && r.method === "POST" && r.path === "/tweets",
    );
    expect(tries.length).toBe(3); // the first post, the refused try, the try after the wait
  });
});
