import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { connectSocialAccount } from "../testing/social.ts";

// get_social_performance (issue 36, parity row getSocialPerformance): the REST report's model, scope and
// domain function, through the official SDK client over Streamable HTTP.
type Json = any;
const HOUR = 3_600_000;
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;

beforeAll(async () => {
  fake = startFakePlatforms();
  h = await buildTestApp({ env: fake.env });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await h.close();
  fake.close();
});

/** A published post with one Reddit target: snapshots of `stages` (likes = stage × 10), published `agoMs` ago. */
async function seedPublished(orgId: string, accountId: string, agoMs: number, stages: number[]) {
  const at = new Date(Date.now() - agoMs).toISOString();
  const [post] = await h.sql`insert into social_posts (org_id, content, platform_overrides, published_at)
    values (${orgId}, ${`post ${agoMs}`}, '{}'::jsonb, ${at}) returning id`;
  const [t] =
    await h.sql`insert into social_targets (post_id, account_id, platform, platform_post_id, url, status, published_at, next_stage)
    values (${post!.id}, ${accountId}, 'reddit', 't3_x', 'https://www.reddit.com/x', 'published', ${at}, ${stages.length + 1}) returning id`;
  for (const s of stages)
    await h.sql`insert into social_snapshots (target_id, stage, likes, comments, extra, captured_at)
      values (${t!.id}, ${s}, ${s * 10}, ${s}, '{}'::jsonb, ${at})`;
  return post!.id as string;
}

describe("get_social_performance", () => {
  test("answers what GET /api/v1/social/performance answers, with its bounds, scope and organization", async () => {
    const o = await h.seedOrg();
    const reddit = await connectSocialAccount(h, o.key, "reddit");
    const older = await seedPublished(o.org.id, reddit.id, 5 * HOUR, [1, 2, 3]);
    const newer = await seedPublished(o.org.id, reddit.id, 2 * HOUR, [1]);
    const fresh = await seedPublished(o.org.id, reddit.id, 10 * 60_000, []);
    const client = await mcpClient(mcp, o.key);
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.find((t) => t.name === "get_social_performance")?.annotations?.readOnlyHint).toBe(true);
      const all = await callTool(client, "get_social_performance");
      expect(all.isError).toBeFalsy();
      const rest = (await (await h.call("GET", "/api/v1/social/performance", { key: o.key })).json()) as Json;
      expect(all.structuredContent).toEqual(rest);
      const posts = all.structuredContent.posts as Json[];
      expect(posts.map((p) => p.postId)).toEqual([fresh, newer, older]);
      expect([posts[2].targets[0].first.likes, posts[2].targets[0].latest.likes]).toEqual([10, 30]);
      // Published minutes ago: no snapshot yet, and the note says when one comes and what to call.
      expect(posts[0].targets[0]).toMatchObject({ first: null, latest: null });
      expect(all.content[0]!.text).toContain("get_social_post");

      const page = await callTool(client, "get_social_performance", { limit: 1, offset: 1 });
      expect(page.structuredContent.posts.map((p: Json) => p.postId)).toEqual([newer]);
      const bad = await callTool(client, "get_social_performance", { days: 91 });
      expect(bad.error.code).toBe("VALIDATION_ERROR");
      expect(bad.error.details[0].field).toBe("days");
    } finally {
      await client.close();
    }

    // Another organization reads its own (empty) report; a key without social:write is refused.
    const other = await h.seedOrg();
    const stranger = await mcpClient(mcp, other.key);
    try {
      const none = await callTool(stranger, "get_social_performance", { days: 90 });
      expect(none.structuredContent.posts).toEqual([]);
      expect(none.content[0]!.text).toContain("create_social_post");
    } finally {
      await stranger.close();
    }
    const reader = await h.seedOrg({ scopes: ["content:read", "content:write"] });
    const readerClient = await mcpClient(mcp, reader.key);
    try {
      const denied = await callTool(readerClient, "get_social_performance");
      expect(denied.error.code).toBe("FORBIDDEN");
      expect(denied.error.message).toContain("social:write");
    } finally {
      await readerClient.close();
    }
  });
});
