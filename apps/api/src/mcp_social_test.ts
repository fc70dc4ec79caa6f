import { describe, expect, test } from "bun:test";
import { sampleImage } from "@site/domain/testing";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

const bed = mcpTestBed();

describe("list_social_media", () => {
  test("the organization's social files, newest first, as the HTTP list answers them; read-only; social:write", async () => {
    const { key } = await bed.h.seedOrg();
    const bytes = sampleImage("jpeg", { size: 200 });
    const p = (await (
      await bed.h.call("POST", "/api/v1/social/media/upload", {
        key,
        body: { contentType: "image/jpeg", size: 200 },
      })
    ).json()) as any;
    const u = new URL(p.upload.url);
    await bed.h.app.handle(
      new Request(`http://localhost${u.pathname}${u.search}`, {
        method: "PUT",
        headers: p.upload.headers,
        body: new Blob([bytes]),
      }),
    );
    const client = await mcpClient(bed.mcp, key);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "list_social_media")!;
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect((tool.inputSchema.properties as any).limit).toMatchObject({ minimum: 1, maximum: 100 });
      const out = await callTool(client, "list_social_media", { limit: 10 });
      expect(out.structuredContent.media.map((m: any) => m.id)).toEqual([p.media.id]);
      expect(out.structuredContent.nextCursor).toBeNull();
    } finally {
      await client.close();
    }
    const other = await mcpClient(bed.mcp, (await bed.h.seedOrg()).key);
    expect((await callTool(other, "list_social_media")).structuredContent.media).toEqual([]);
    await other.close();
    const noScope = await mcpClient(bed.mcp, (await bed.h.seedOrg({ scopes: ["content:read"] })).key);
    const denied = await callTool(noScope, "list_social_media");
    expect(denied.isError).toBe(true);
    expect(denied.error.code).toBe("FORBIDDEN");
    await noScope.close();
  });
});
