import { describe, expect, test } from "bun:test";
import { organizations } from "@site/db";
import { failRender } from "@site/domain/screenshots";
import { eq } from "drizzle-orm";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

const bed = mcpTestBed();

const creditsOf = async (orgId: string) =>
  (
    await bed.h.db.select({ c: organizations.credits }).from(organizations).where(eq(organizations.id, orgId))
  )[0].c;

describe("create_clip and get_clip", () => {
  test("needs social:write; create_clip queues a clip (30 credits) and prices one for free", async () => {
    const reader = await bed.h.seedOrg({ scopes: ["content:read"] });
    const readerClient = await mcpClient(bed.mcp, reader.key);
    try {
      const denied = await callTool(readerClient, "create_clip", {
        url: "https://example.com/",
        motion: "scroll",
      });
      expect(denied.isError).toBe(true);
      expect(denied.content[0].text).toContain("social:write");
    } finally {
      await readerClient.close();
    }
    const o = await bed.h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const client = await mcpClient(bed.mcp, o.key);
    try {
      const tools = (await client.listTools()).tools;
      const create = tools.find((t) => t.name === "create_clip")!;
      expect((create.inputSchema.properties as any).motion).toBeDefined();
      expect(tools.find((t) => t.name === "get_clip")!.annotations?.readOnlyHint).toBe(true);
      const estimate = await callTool(client, "create_clip", {
        url: "https://example.com/",
        motion: "scroll",
        estimateOnly: true,
      });
      expect(estimate.structuredContent).toEqual({ estimate: true, credits: 30 });
      const bad = await callTool(client, "create_clip", { url: "https://example.com/", motion: "spin" });
      expect(bad.isError).toBe(true);
      const out = await callTool(client, "create_clip", {
        url: "https://example.com/",
        motion: "scroll-tilt",
      });
      expect(out.isError).toBeFalsy();
      expect(out.structuredContent).toMatchObject({ status: "pending", credits: 30 });
      expect(await creditsOf(o.org.id)).toBe(70);
    } finally {
      await client.close();
    }
  });

  test("get_clip waits with waitSeconds: it answers as soon as the clip ends, or pending after the wait", async () => {
    const o = await bed.h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const client = await mcpClient(bed.mcp, o.key);
    try {
      const { clipId } = (
        await callTool(client, "create_clip", { url: "https://example.com/", motion: "orbit" })
      ).structuredContent as { clipId: string };
      let t0 = performance.now();
      const still = await callTool(client, "get_clip", { clipId, waitSeconds: 1 });
      expect(still.structuredContent).toMatchObject({ clipId, status: "pending" });
      expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
      // ends while a get_clip waits: the call answers then, not after its whole wait
      t0 = performance.now();
      setTimeout(() => void failRender(bed.h.ctx, clipId, "the page could not be reached"), 400);
      const ended = await callTool(client, "get_clip", { clipId, waitSeconds: 20 });
      expect(ended.structuredContent).toMatchObject({
        status: "failed",
        error: "the page could not be reached",
      });
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(ended.content[0].text).toContain("refunded");
      expect(await creditsOf(o.org.id)).toBe(100);
      const tooLong = await callTool(client, "get_clip", { clipId, waitSeconds: 26 });
      expect(tooLong.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
