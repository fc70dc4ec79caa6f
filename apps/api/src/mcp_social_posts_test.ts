import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fixedClock } from "@site/config";
import { sweepSocialTargets } from "@site/domain/social";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { connectSocialAccount } from "../testing/social.ts";

// The MCP tools of social posts on their own clock (issue 33): schedule, change, cancel, list, read.
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;
const clock = fixedClock(new Date());
const DAY = 86_400_000;

beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env, clock });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await h.close();
  fake.close();
});

describe("social post tools", () => {
  test("create_social_post with scheduledAt, update_social_post, list_social_posts by status, get_social_post waits for the publication, cancel_social_post", async () => {
    const { key } = await h.seedOrg();
    const x = await connectSocialAccount(h, key, "x", { tier: "basic" });
    const client = await mcpClient(mcp, key);
    try {
      const at = new Date(clock.now().getTime() + DAY).toISOString();
      const created = await callTool(client, "create_social_post", {
        content: "draft",
        accounts: [x.id],
        scheduledAt: at,
      });
      const post = created.structuredContent.post;
      expect(post).toMatchObject({ status: "scheduled", content: "draft" });
      const text = `via MCP ${crypto.randomUUID()}`;
      const updated = await callTool(client, "update_social_post", { postId: post.postId, content: text });
      expect(updated.structuredContent.post.content).toBe(text);
      const other = await callTool(client, "create_social_post", {
        content: "never",
        accounts: [x.id],
        scheduledAt: at,
      });
      const cancelled = await callTool(client, "cancel_social_post", {
        postId: other.structuredContent.post.postId,
      });
      expect(cancelled.structuredContent.post.status).toBe("cancelled");
      const listed = await callTool(client, "list_social_posts", { status: "scheduled" });
      expect(listed.structuredContent.posts.map((p: any) => p.postId)).toEqual([post.postId]);

      clock.advance(DAY + 1000);
      await sweepSocialTargets(h.ctx);
      const read = await callTool(client, "get_social_post", { postId: post.postId, waitSeconds: 10 });
      expect(read.structuredContent.post.targets[0]).toMatchObject({ status: "published", metrics: [] });
      expect(fake.postsWithText("x", text)).toHaveLength(1);
      const late = await callTool(client, "update_social_post", { postId: post.postId, content: "late" });
      expect(late.isError).toBe(true);
      expect(late.error.code).toBe("CONFLICT");
    } finally {
      await client.close();
    }
  });
});
