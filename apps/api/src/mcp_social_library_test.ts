import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sampleImage } from "@site/domain/testing";
import { type FakePlatforms, startFakeImageApi, startFakePlatforms } from "@site/social/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { connectSocialAccount } from "../testing/social.ts";

// The social tools that closed the parity table's gaps (issue 36): the social library (add a site's
// file, generate, delete), deleting a post not yet out, and a TikTok account's posting options,
// against the strict fake platforms and a local OpenAI-compatible images server.

type Json = any;
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;
let images: ReturnType<typeof startFakeImageApi>;

beforeAll(async () => {
  fake = startFakePlatforms();
  images = startFakeImageApi({ delayMs: 10 });
  h = await buildTestApp({ env: { ...fake.env, ...images.env } });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await h.close();
  images.close();
  fake.close();
});

const credits = async (orgId: string) =>
  (await h.sql`select credits from organizations where id = ${orgId}`)[0]!.credits as number;

describe("social library and post tools", () => {
  test("add_social_media takes a site's file (once), delete_social_media waits for the post using it, delete_social_post frees it", async () => {
    const org = await h.seedOrg();
    const siteId = ((await h.newSite(org.key)) as Json).id;
    const x = await connectSocialAccount(h, org.key, "x", { tier: "basic" });
    const client = await mcpClient(mcp, org.key);
    try {
      const png = sampleImage("png", { width: 64, height: 48, size: 2048 });
      const up = await callTool(client, "upload_media", {
        siteId,
        dataBase64: Buffer.from(png).toString("base64"),
      });
      const added = await callTool(client, "add_social_media", { url: up.structuredContent.url });
      const media = added.structuredContent.media;
      expect(media).toMatchObject({ kind: "image", url: up.structuredContent.url });
      expect(added.content[0]!.text).toContain("create_social_post");
      const again = await callTool(client, "add_social_media", { url: up.structuredContent.url });
      expect(again.structuredContent.media.id).toBe(media.id);
      const outside = await callTool(client, "add_social_media", { url: "https://cdn.example.com/a.png" });
      expect(outside.error.code).toBe("VALIDATION_ERROR");
      expect(outside.error.message).toContain("url");

      const post = await callTool(client, "create_social_post", {
        content: "soon",
        accounts: [x.id],
        media: [media.id],
        scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      const postId = post.structuredContent.post.postId;
      const busy = await callTool(client, "delete_social_media", { mediaId: media.id });
      expect(busy.error.code).toBe("CONFLICT");

      const gone = await callTool(client, "delete_social_post", { postId });
      expect(gone.structuredContent).toEqual({ deleted: true, postId });
      expect((await callTool(client, "get_social_post", { postId })).error.code).toBe("NOT_FOUND");
      const freed = await callTool(client, "delete_social_media", { mediaId: media.id });
      expect(freed.structuredContent).toEqual({ deleted: true, mediaId: media.id });
      expect((await callTool(client, "list_social_media")).structuredContent.media).toEqual([]);
      // The site's own file stays in its library.
      const library = await callTool(client, "list_media", { siteId });
      expect(library.structuredContent.images.map((i: Json) => i.url)).toEqual([up.structuredContent.url]);
    } finally {
      await client.close();
    }
  });

  test("generate_social_images charges once for two calls under one idempotencyKey; other arguments under it are a CONFLICT", async () => {
    const org = await h.seedOrg({ credits: 100 });
    const client = await mcpClient(mcp, org.key);
    try {
      const { tools } = await client.listTools();
      const schema = tools.find((t) => t.name === "generate_social_images")!.inputSchema as Json;
      expect(schema.properties.idempotencyKey).toMatchObject({ type: "string" });
      const served = images.requests.length;
      const args = { prompt: "a lighthouse at dusk", n: 2, idempotencyKey: crypto.randomUUID() };
      const first = await callTool(client, "generate_social_images", args);
      expect(first.structuredContent.creditsCharged).toBe(20);
      expect(first.structuredContent.media).toHaveLength(2);
      const second = await callTool(client, "generate_social_images", args);
      expect(second.structuredContent).toEqual(first.structuredContent);
      expect(images.requests.length).toBe(served + 1);
      expect(await credits(org.org.id)).toBe(80);
      const other = await callTool(client, "generate_social_images", { ...args, prompt: "a storm" });
      expect(other.error.code).toBe("CONFLICT");
      const listed = await callTool(client, "list_social_media");
      expect(listed.structuredContent.media).toHaveLength(2);
      const broke = await h.seedOrg({ credits: 5 });
      const poor = await mcpClient(mcp, broke.key);
      try {
        const refused = await callTool(poor, "generate_social_images", { prompt: "a cat" });
        expect(refused.error.code).toBe("QUOTA_EXCEEDED");
      } finally {
        await poor.close();
      }
    } finally {
      await client.close();
    }
  });

  test("get_tiktok_creator_info answers the creator's privacy levels; another platform's account is refused", async () => {
    const org = await h.seedOrg();
    const token = `tok-tiktok-${Math.random()}`;
    fake.setTikTokPrivacy(token, ["PUBLIC_TO_EVERYONE", "SELF_ONLY"]);
    const tiktok = await connectSocialAccount(h, org.key, "tiktok", { accessToken: token });
    const x = await connectSocialAccount(h, org.key, "x");
    const client = await mcpClient(mcp, org.key);
    try {
      const info = await callTool(client, "get_tiktok_creator_info", { accountId: tiktok.id });
      expect(info.structuredContent.creatorInfo).toMatchObject({
        privacyLevelOptions: ["PUBLIC_TO_EVERYONE", "SELF_ONLY"],
        selectablePrivacyLevels: ["SELF_ONLY"],
      });
      expect(info.content[0]!.text).toContain("platformOptions.tiktok.privacyLevel");
      const wrong = await callTool(client, "get_tiktok_creator_info", { accountId: x.id });
      expect(wrong.error.code).toBe("VALIDATION_ERROR");
      const stranger = await mcpClient(mcp, (await h.seedOrg()).key);
      try {
        const hidden = await callTool(stranger, "get_tiktok_creator_info", { accountId: tiktok.id });
        expect(hidden.error.code).toBe("NOT_FOUND");
      } finally {
        await stranger.close();
      }
    } finally {
      await client.close();
    }
  });
});
