import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SCOPES } from "@site/domain/core";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type AppServer, type CallResult, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook_receiver.ts";

// Every job without REST (issue 36; CONTRACT "Agents over MCP"): the tools an agent lacked — one site,
// campaign states, social accounts, webhooks — through the official SDK client, each answer naming the
// next tool, never a REST route.

type Json = any;
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;
let rx: WebhookReceiver;
let key: string;

beforeAll(async () => {
  fake = startFakePlatforms();
  rx = startWebhookReceiver();
  mcp = listenApp();
  h = await buildTestApp({
    env: { PUBLIC_BASE_URL: mcp.base, FETCH_ALLOW_HOSTS: rx.host, ...fake.env, ...fake.oauthEnv },
  });
  mcp.serve(h);
  ({ key } = await h.seedOrg({ siteLimit: 10, scopes: [...SCOPES] }));
});
afterAll(async () => {
  mcp.stop();
  await h.close();
  rx.stop();
  fake.close();
});

/** A REST route in words meant for an agent: a method and a path, or an API path. */
const REST_ROUTE = /\b(GET|POST|PUT|PATCH|DELETE) \/|\/api\/v1\/(?!public\/)/;

/** Calls a tool, expects no error, and checks its answer names no REST route. */
async function ok(
  client: Awaited<ReturnType<typeof mcpClient>>,
  name: string,
  args: Json,
): Promise<CallResult> {
  const res = await callTool(client, name, args);
  expect({ name, error: res.error }).toEqual({ name, error: undefined });
  expect(res.content[0]!.text, `${name}'s answer`).not.toMatch(REST_ROUTE);
  return res;
}

describe("the tools an agent lacked", () => {
  test("no tool description names a REST route: they name tools", async () => {
    const client = await mcpClient(mcp, key);
    try {
      const { tools } = await client.listTools();
      for (const t of tools) expect(`${t.name}: ${t.description}`).not.toMatch(REST_ROUTE);
    } finally {
      await client.close();
    }
  });

  test("one site: get_site, rename_site, delete_site, as REST sees them", async () => {
    const site = await h.newSite(key, { name: "Before" });
    const client = await mcpClient(mcp, key);
    try {
      const got = await ok(client, "get_site", { siteId: site.id });
      expect(got.structuredContent.site).toMatchObject({ id: site.id, name: "Before" });
      const renamed = await ok(client, "rename_site", { siteId: site.id, name: "After" });
      expect(renamed.structuredContent.site.name).toBe("After");
      const rest = (await (await h.call("GET", `/api/v1/sites/${site.id}`, { key })).json()) as Json;
      expect(rest).toEqual({ site: renamed.structuredContent.site });
      const deleted = await ok(client, "delete_site", { siteId: site.id });
      expect(deleted.structuredContent).toEqual({ deleted: true, siteId: site.id });
      const gone = await callTool(client, "get_site", { siteId: site.id });
      expect(gone.error.code).toBe("NOT_FOUND");
      expect((await h.call("GET", `/api/v1/sites/${site.id}`, { key })).status).toBe(404);
    } finally {
      await client.close();
    }
  });

  test("campaigns: get_campaign, cancel_campaign, resume_campaign; the answers lead to the next tool", async () => {
    const site = await h.newSite(key);
    const client = await mcpClient(mcp, key);
    try {
      await ok(client, "add_subscriber", { siteId: site.id, email: "ada@example.com" });
      const draft = await ok(client, "create_campaign", {
        siteId: site.id,
        subject: "Hi",
        html: "<p>Hi</p>",
      });
      expect(draft.content[0]!.text).toContain("send_test_campaign");
      const campaignId = draft.structuredContent.campaign.id;
      const got = await ok(client, "get_campaign", { siteId: site.id, campaignId });
      expect(got.structuredContent.campaign).toMatchObject({ id: campaignId, status: "draft" });
      expect(got.content[0]!.text).toContain("send_campaign");
      const sendAt = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = await ok(client, "send_campaign", { siteId: site.id, campaignId, sendAt });
      expect(scheduled.structuredContent.campaign.status).toBe("scheduled");
      expect(scheduled.content[0]!.text).toContain("cancel_campaign");
      const cancelled = await ok(client, "cancel_campaign", { siteId: site.id, campaignId });
      expect(cancelled.structuredContent.campaign.status).toBe("cancelled");
      // Only a paused campaign resumes: the refusal says so, as REST's does.
      const resume = await callTool(client, "resume_campaign", { siteId: site.id, campaignId });
      expect(resume.error.code).toBe("VALIDATION_ERROR");
      const rest = await h.call("POST", `/api/v1/sites/${site.id}/campaigns/${campaignId}/resume`, { key });
      expect(rest.status).toBe(400);
    } finally {
      await client.close();
    }
  });

  test("social accounts: add with a token, start an OAuth connection, list, disconnect", async () => {
    const client = await mcpClient(mcp, key);
    try {
      const none = await ok(client, "list_social_accounts", {});
      expect(none.structuredContent.accounts).toEqual([]);
      expect(none.content[0]!.text).toContain("connect_social_account");
      const added = await ok(client, "connect_social_account", {
        platform: "threads",
        accountId: "th-1",
        accessToken: "token-1",
        permissions: ["threads_basic", "threads_content_publish"],
      });
      const accountId = added.structuredContent.account.id;
      expect(added.content[0]!.text).toContain("create_social_post");
      expect(JSON.stringify(added.structuredContent)).not.toContain("token-1");
      const started = await ok(client, "start_social_connection", { platform: "x" });
      expect(new URL(started.structuredContent.authorizeUrl).searchParams.get("state")).toBe(
        started.structuredContent.state,
      );
      expect(started.content[0]!.text).toContain("confirm_social_connection");
      const listed = await ok(client, "list_social_accounts", {});
      expect(listed.structuredContent.accounts.map((a: Json) => a.id)).toEqual([accountId]);
      const rest = (await (await h.call("GET", "/api/v1/social/accounts", { key })).json()) as Json;
      expect(rest).toEqual(listed.structuredContent);
      await ok(client, "disconnect_social_account", { accountId });
      expect((await ok(client, "list_social_accounts", {})).structuredContent.accounts).toEqual([]);
      const again = await callTool(client, "disconnect_social_account", { accountId });
      expect(again.error.code).toBe("NOT_FOUND");
    } finally {
      await client.close();
    }
  });

  test("webhooks: create, list, rotate, deliveries, recover, change, delete; only for webhooks:write", async () => {
    const client = await mcpClient(mcp, key);
    try {
      const created = await ok(client, "create_webhook", {
        url: rx.url("/mcp"),
        events: ["site.published"],
      });
      const webhookId = created.structuredContent.webhook.id;
      expect(created.structuredContent.secret).toMatch(/^whsec_/);
      const listed = await ok(client, "list_webhooks", {});
      expect(listed.structuredContent.webhooks.map((w: Json) => w.id)).toContain(webhookId);
      const rotated = await ok(client, "rotate_webhook_secret", { webhookId });
      expect(rotated.structuredContent.secret).not.toBe(created.structuredContent.secret);
      const site = await h.newSite(key);
      await ok(client, "publish_site", { siteId: site.id });
      const deliveries = await ok(client, "list_webhook_deliveries", { webhookId });
      expect(deliveries.structuredContent.deliveries.map((d: Json) => d.event)).toEqual(["site.published"]);
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const recovered = await ok(client, "recover_webhook_deliveries", { webhookId, since });
      expect(recovered.structuredContent).toEqual({ accepted: true, deliveries: 0 });
      const tooOld = await callTool(client, "recover_webhook_deliveries", {
        webhookId,
        since: new Date(Date.now() - 30 * 86_400_000).toISOString(),
      });
      expect(tooOld.error.code).toBe("VALIDATION_ERROR");
      const changed = await ok(client, "update_webhook", { webhookId, events: ["media.created"] });
      expect(changed.structuredContent.webhook.events).toEqual(["media.created"]);
      await ok(client, "delete_webhook", { webhookId });
      const left = await ok(client, "list_webhooks", {});
      expect(left.structuredContent.webhooks.map((w: Json) => w.id)).not.toContain(webhookId);
    } finally {
      await client.close();
    }
    const { key: noWebhooks } = await h.seedOrg();
    const limited = await mcpClient(mcp, noWebhooks);
    try {
      const names = (await limited.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain("list_webhooks");
      expect((await callTool(limited, "list_webhooks", {})).error.code).toBe("FORBIDDEN");
    } finally {
      await limited.close();
    }
  });
});
