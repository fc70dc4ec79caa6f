import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { publishTarget } from "@site/domain/social";
import { createPlatformAdapters } from "@site/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { connectSocialAccount } from "../testing/social.ts";

// get_social_post's waitSeconds on the one notification path (issue 36; CONTRACT "Agents over MCP":
// waiting costs the database no query per waiter per tick; decision 1517): waiters of a post scheduled
// within the wait sleep on the work_ended LISTEN and wake when the transaction that ends its target
// commits. This process runs no publisher of its own: the test publishes the target itself.
type Json = any;
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;
let queries = 0;

beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env, socialPublisher: false, onQuery: () => queries++ });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await h.close();
  fake.close();
});

async function until(check: () => boolean, ms = 20_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(20);
  }
}

describe("get_social_post waits on the notification path", () => {
  test("20 waiters of a post due within the wait cost no query while they sleep, and answer when its target is published", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const client = await mcpClient(mcp, key);
    try {
      const text = `soon ${crypto.randomUUID()}`;
      const dueAt = Date.now() + 3000;
      const created = await callTool(client, "create_social_post", {
        content: text,
        accounts: [x.id],
        scheduledAt: new Date(dueAt).toISOString(),
      });
      const postId = created.structuredContent.post.postId as string;
      // A post scheduled after the wait ends answers at once, saying when to wait for it.
      const far = await callTool(client, "create_social_post", {
        content: "tomorrow",
        accounts: [x.id],
        scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      const t0 = Date.now();
      const notYet = await callTool(client, "get_social_post", {
        postId: far.structuredContent.post.postId,
        waitSeconds: 25,
      });
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(notYet.structuredContent.post.status).toBe("scheduled");
      expect(notYet.content[0]!.text).toContain("get_social_post");

      const waiters = Array.from({ length: 20 }, () =>
        callTool(client, "get_social_post", { postId, waitSeconds: 25 }),
      );
      await until(() => h.renderWaits.waiting === 20);
      let last = -1;
      for (let i = 0; i < 50 && queries !== last; i++) {
        last = queries;
        await Bun.sleep(100);
      }
      // A second of 20 sleeping waiters: polling every 200 ms would be about 100 reads.
      const before = queries;
      await Bun.sleep(1000);
      expect(queries - before).toBe(0);

      // Due: the target is published (as the publisher's job would), and every waiter answers.
      await Bun.sleep(Math.max(0, dueAt - Date.now() + 50));
      const [target] = await h.sql<{ id: string }[]>`select id from social_targets where post_id = ${postId}`;
      const published = Date.now();
      expect((await publishTarget(h.ctx, createPlatformAdapters(h.ctx), target!.id)).outcome).toBe(
        "published",
      );
      const answers = await Promise.all(waiters);
      expect(Date.now() - published).toBeLessThan(10_000);
      for (const a of answers)
        expect(a.structuredContent.post.targets.map((t: Json) => t.status)).toEqual(["published"]);
      expect(h.renderWaits.waiting).toBe(0);
      expect(fake.postsWithText("x", text)).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 60_000);
});
