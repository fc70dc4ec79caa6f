import { describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
import { recordBounce } from "@site/domain/newsletters";
import { sampleImage } from "@site/domain/testing";
import { callTool, mcpClient, mcpTestBed } from "../testing/mcp.ts";

// The newsletter tools that closed the parity table's gaps (issue 36): one subscriber (read with its
// bounce log, reactivate, delete) and a campaign's edits (change, delete, revoke its mailed images).

type Json = any;
const bed = mcpTestBed();

describe("subscriber tools", () => {
  test("get_subscriber shows a hard bounce, reactivate_subscriber undoes it, delete_subscriber removes the address", async () => {
    const org = await bed.h.seedOrg();
    const siteId = ((await bed.h.newSite(org.key)) as Json).id;
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const added = await callTool(client, "add_subscriber", { siteId, email: "ada@example.com" });
      const id = added.structuredContent.subscriber.id;
      await recordBounce(bed.h.ctx, {
        subscriberId: id,
        campaignId: null,
        status: "5.1.1",
        kind: "hard",
        diagnostic: "550 5.1.1 user unknown",
      });
      const read = await callTool(client, "get_subscriber", { siteId, subscriberId: id });
      expect(read.structuredContent.subscriber).toMatchObject({ id, status: "bounced" });
      expect(read.structuredContent.subscriber.bounces).toMatchObject([
        { status: "5.1.1", kind: "hard", diagnostic: "550 5.1.1 user unknown" },
      ]);
      const back = await callTool(client, "reactivate_subscriber", { siteId, subscriberId: id });
      expect(back.structuredContent.subscriber.status).toBe("active");
      // The log stays.
      expect(back.structuredContent.subscriber.bounces).toHaveLength(1);

      const gone = await callTool(client, "delete_subscriber", { siteId, subscriberId: id });
      expect(gone.structuredContent).toEqual({ deleted: true, subscriberId: id });
      const listed = await callTool(client, "list_subscribers", { siteId });
      expect(listed.structuredContent.subscribers).toEqual([]);
      const again = await callTool(client, "get_subscriber", { siteId, subscriberId: id });
      expect(again.error.code).toBe("NOT_FOUND");
      const malformed = await callTool(client, "get_subscriber", { siteId, subscriberId: "ada" });
      expect(malformed.error.code).toBe("VALIDATION_ERROR");
      expect(malformed.error.message).toContain("subscriberId");
    } finally {
      await client.close();
    }
  });
});

describe("campaign edit tools", () => {
  test("update_campaign changes a draft and refuses a scheduled one; revoke_campaign_media; delete_campaign", async () => {
    const org = await bed.h.seedOrg();
    const siteId = ((await bed.h.newSite(org.key)) as Json).id;
    const file = await addLibraryFile(bed.h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const client = await mcpClient(bed.mcp, org.key);
    try {
      await callTool(client, "add_subscriber", { siteId, email: "bo@example.com" });
      const made = await callTool(client, "create_campaign", {
        siteId,
        subject: "Spring",
        html: "<p>Hi</p>",
      });
      const campaignId = made.structuredContent.campaign.id;
      const changed = await callTool(client, "update_campaign", {
        siteId,
        campaignId,
        subject: "Summer",
        html: `<p>Hi</p><img src="${file.url}" alt="sun">`,
      });
      expect(changed.structuredContent.campaign).toMatchObject({ subject: "Summer", status: "draft" });
      expect(changed.content[0]!.text).toContain("send_test_campaign");
      const foreign = await callTool(client, "update_campaign", {
        siteId,
        campaignId,
        html: '<img src="https://cdn.example.com/a.png">',
      });
      expect(foreign.error.code).toBe("VALIDATION_ERROR");

      const sendAt = new Date(Date.now() + 86_400_000).toISOString();
      await callTool(client, "send_campaign", { siteId, campaignId, sendAt });
      const late = await callTool(client, "update_campaign", { siteId, campaignId, subject: "Autumn" });
      expect(late.error.code).toBe("VALIDATION_ERROR");
      expect(late.error.message).toContain("scheduled");

      const before = await bed.h
        .sql`select media_generation from newsletter_campaigns where id = ${campaignId}`;
      const revoked = await callTool(client, "revoke_campaign_media", { siteId, campaignId });
      expect(revoked.structuredContent.campaign.id).toBe(campaignId);
      const after = await bed.h
        .sql`select media_generation from newsletter_campaigns where id = ${campaignId}`;
      expect(after[0]!.media_generation).toBe(before[0]!.media_generation + 1);

      const deleted = await callTool(client, "delete_campaign", { siteId, campaignId });
      expect(deleted.structuredContent).toEqual({ deleted: true, campaignId });
      const listed = await callTool(client, "list_campaigns", { siteId });
      expect(listed.structuredContent.campaigns).toEqual([]);
      const twice = await callTool(client, "delete_campaign", { siteId, campaignId });
      expect(twice.error.code).toBe("NOT_FOUND");
    } finally {
      await client.close();
    }
  });

  test("a content:read key reads a subscriber but may not change campaigns or subscribers", async () => {
    const org = await bed.h.seedOrg();
    const siteId = ((await bed.h.newSite(org.key)) as Json).id;
    const owner = await mcpClient(bed.mcp, org.key);
    const { createApiKey } = await import("@site/domain/core");
    const reader = await createApiKey(bed.h.ctx, {
      orgId: org.org.id,
      userId: org.user.id,
      scopes: ["content:read"],
    });
    const client = await mcpClient(bed.mcp, reader.key);
    try {
      const added = await callTool(owner, "add_subscriber", { siteId, email: "cy@example.com" });
      const subscriberId = added.structuredContent.subscriber.id;
      const read = await callTool(client, "get_subscriber", { siteId, subscriberId });
      expect(read.structuredContent.subscriber.email).toBe("cy@example.com");
      for (const name of [
        "delete_subscriber",
        "reactivate_subscriber",
        "update_campaign",
        "delete_campaign",
      ]) {
        const r = await callTool(client, name, { siteId, subscriberId });
        expect([name, r.error.code]).toEqual([name, "FORBIDDEN"]);
      }
    } finally {
      await client.close();
      await owner.close();
    }
  });
});
