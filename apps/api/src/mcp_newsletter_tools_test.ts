import { describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

const bed = mcpTestBed();

describe("MCP newsletter tools", () => {
  test("an agent creates a campaign draft from a library image and lists it; a foreign image is refused by line", async () => {
    const org = await bed.h.seedOrg();
    const res = await bed.h.call("POST", "/api/v1/sites", {
      key: org.key,
      body: { name: "N", slug: `mn-${uniq()}` },
    });
    const siteId = ((await res.json()) as Json).site.id as string;
    const file = await addLibraryFile(bed.h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const refused = await callTool(client, "create_campaign", {
        siteId,
        subject: "Hi",
        html: `<p>x</p>\n<img src="https://cdn.example.com/a.png">`,
      });
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toContain("VALIDATION_ERROR");
      expect(refused.content[0]!.text).toContain("line 2");
      const made = await callTool(client, "create_campaign", {
        siteId,
        subject: "Spring",
        preheader: "Seeds",
        html: `<img src="${file.url}" alt="x">`,
      });
      expect(made.isError).toBeFalsy();
      const campaign = made.structuredContent.campaign;
      expect(campaign).toMatchObject({ subject: "Spring", status: "draft" });
      expect(campaign.html).toContain("?k=m.");
      const listed = await callTool(client, "list_campaigns", { siteId });
      expect(listed.structuredContent.campaigns.map((c: Json) => c.id)).toEqual([campaign.id]);
      const other = await bed.h.seedOrg();
      const stranger = await mcpClient(bed.mcp, other.key);
      try {
        const hidden = await callTool(stranger, "list_campaigns", { siteId });
        expect(hidden.isError).toBe(true);
        expect(hidden.content[0]!.text).toContain("NOT_FOUND");
      } finally {
        await stranger.close();
      }
      const readOnly = await bed.h.seedOrg({ scopes: ["content:read"] });
      const reader = await mcpClient(bed.mcp, readOnly.key);
      try {
        const denied = await callTool(reader, "create_campaign", { siteId, subject: "x", html: "<p>x</p>" });
        expect(denied.isError).toBe(true);
        expect(denied.content[0]!.text).toContain("FORBIDDEN");
      } finally {
        await reader.close();
      }
    } finally {
      await client.close();
    }
  });
});
