import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sampleImage } from "@site/domain/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { connectSocialAccount } from "../testing/social.ts";

// MCP that meets its clients (issue 29 item 4; contract "One site, deleting files, CORS, MCP
// discovery"; decision 0733), driven with the official SDK client over Streamable HTTP, as users do.

type Json = any;
let h: TestApp;
let mcp: AppServer;
let fake: FakePlatforms;

beforeAll(async () => {
  fake = startFakePlatforms();
  mcp = listenApp();
  h = await buildTestApp({ env: { ...fake.env, PUBLIC_BASE_URL: mcp.base } });
  mcp.serve(h);
});
afterAll(async () => {
  mcp.stop();
  fake.close();
  await h.close();
});

async function withClient<T>(key: string, run: (c: Client) => Promise<T>): Promise<T> {
  const client = await mcpClient(mcp, key);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

describe("discovery and a wrong key", () => {
  test("401 names the RFC 9728 metadata, which answers JSON with `resource`; the SDK client reports the refused key", async () => {
    const res = await fetch(`${mcp.base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk_wrong",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate")!;
    expect(challenge).toStartWith("Bearer ");
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(url).toBe(`${mcp.base}/.well-known/oauth-protected-resource/mcp`);
    expect(challenge).toContain('error="invalid_token"');

    for (const at of [url!, `${mcp.base}/.well-known/oauth-protected-resource`]) {
      const meta = await fetch(at);
      expect(meta.status).toBe(200);
      expect(meta.headers.get("content-type")).toContain("application/json");
      const body = (await meta.json()) as Json;
      expect(body.resource).toBe(`${mcp.base}/mcp`);
      expect(body.bearer_methods_supported).toEqual(["header"]);
      expect(body.authorization_servers).toBeUndefined();
    }
    // Only /mcp's 401 names it.
    const rest = await fetch(`${mcp.base}/api/v1/sites`, { headers: { authorization: "Bearer sk_wrong" } });
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")).not.toContain("resource_metadata");

    const client = new Client({ name: "wrong-key", version: "1.0.0" });
    const failure = await client
      .connect(
        new StreamableHTTPClientTransport(new URL(`${mcp.base}/mcp`), {
          requestInit: { headers: { authorization: "Bearer sk_wrong" } },
        }),
      )
      .then(
        () => null,
        (e: unknown) => e as Error,
      );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error & { code?: number }).code).toBe(401);
    expect(String(failure!.message)).toContain("invalid or revoked API key");
  });
});

describe("tools/list and arguments", () => {
  test("tools/list shows only the tools the key's scopes allow", async () => {
    const names = async (scopes: string[]) => {
      const { key } = await h.seedOrg({ scopes: scopes as never });
      return withClient(key, async (c) => (await c.listTools()).tools.map((t) => t.name));
    };
    const reader = await names(["content:read"]);
    expect(reader).toContain("list_media");
    expect(reader).toContain("list_subscribers");
    for (const hidden of [
      "upload_media",
      "delete_media",
      "create_site",
      "create_social_post",
      "list_social_posts",
      "send_campaign",
    ])
      expect(reader).not.toContain(hidden);
    const all = await names(["content:read", "content:write", "sites:write", "social:write"]);
    for (const name of [
      "upload_media",
      "delete_media",
      "delete_page",
      "add_subscriber",
      "list_subscribers",
      "send_test_campaign",
      "send_campaign",
      "list_social_posts",
      "create_social_post",
    ])
      expect(all).toContain(name);
    expect(all.length).toBeGreaterThan(reader.length);
  });

  test("every tool's input is strict; a misspelt argument (etag for ifMatch) is an error and nothing is written", async () => {
    const { key } = await h.seedOrg();
    const site = await h.newSite(key);
    await withClient(key, async (c) => {
      for (const t of (await c.listTools()).tools)
        expect([t.name, (t.inputSchema as Json).additionalProperties]).toEqual([t.name, false]);
      const before = await callTool(c, "get_site_layout", { siteId: site.id });
      const layout = { ...before.structuredContent.layout, footer: { text: "Changed", links: [] } };
      const wrong = await callTool(c, "update_site_layout", {
        siteId: site.id,
        layout,
        etag: before.structuredContent.etag,
      });
      expect(wrong.isError).toBe(true);
      expect(wrong.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(wrong.error)).toContain("etag");
      const after = await callTool(c, "get_site_layout", { siteId: site.id });
      expect(after.structuredContent.layout.footer.text).not.toBe("Changed");
      const right = await callTool(c, "update_site_layout", {
        siteId: site.id,
        layout,
        ifMatch: after.structuredContent.etag,
      });
      expect(right.isError).toBeUndefined();
    });
  });
});

describe("the new jobs", () => {
  test("upload_media (base64, bounded), delete_media refused while a page uses it, delete_page, then delete_media", async () => {
    const { key } = await h.seedOrg();
    const site = await h.newSite(key);
    await withClient(key, async (c) => {
      const bytes = sampleImage("png", { size: 3000 });
      const up = await callTool(c, "upload_media", {
        siteId: site.id,
        dataBase64: Buffer.from(bytes).toString("base64"),
        name: "logo.png",
        alt: "Logo",
      });
      expect(up.isError).toBeUndefined();
      expect(up.structuredContent.url).toStartWith(`/api/media/site-media/${site.id}/logo`);
      expect(up.structuredContent.size).toBe(3000);
      const listed = await callTool(c, "list_media", { siteId: site.id });
      const file = listed.structuredContent.images.find((i: Json) => i.url === up.structuredContent.url);
      expect(file.id).toMatch(/^[0-9a-f-]{36}$/);

      const notImage = await callTool(c, "upload_media", {
        siteId: site.id,
        dataBase64: Buffer.from("<svg></svg>").toString("base64"),
      });
      expect(notImage.error.code).toBe("VALIDATION_ERROR");
      const notBase64 = await callTool(c, "upload_media", { siteId: site.id, dataBase64: "%%%%" });
      expect(notBase64.error.code).toBe("VALIDATION_ERROR");
      const tooBig = await callTool(c, "upload_media", {
        siteId: site.id,
        dataBase64: "A".repeat(7_000_000),
      });
      expect(tooBig.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(tooBig.error.details)).toContain("dataBase64");
      // A file of almost 5 MB travels (the body limit leaves room for it).
      const large = sampleImage("png", { size: 5 * 1024 * 1024 - 16 });
      const big = await callTool(c, "upload_media", {
        siteId: site.id,
        dataBase64: Buffer.from(large).toString("base64"),
      });
      expect(big.isError).toBeUndefined();
      expect(big.structuredContent.size).toBe(large.byteLength);

      const page = await callTool(c, "create_page", {
        siteId: site.id,
        path: "/logo",
        title: "Logo",
        content: `# Logo\n\n<Media src="${up.structuredContent.url}" alt="Logo" />`,
      });
      expect(page.isError).toBeUndefined();
      const pageId = page.structuredContent.page.id;
      const refused = await callTool(c, "delete_media", { siteId: site.id, mediaId: file.id });
      expect(refused.isError).toBe(true);
      expect(refused.error.code).toBe("CONFLICT");
      expect(refused.error.details.references).toEqual([{ kind: "page", id: pageId, path: "/logo" }]);

      expect((await callTool(c, "delete_page", { siteId: site.id, pageId })).structuredContent).toEqual({
        deleted: true,
        pageId,
      });
      expect((await callTool(c, "delete_page", { siteId: site.id, pageId })).error.code).toBe("NOT_FOUND");
      expect(
        (await callTool(c, "delete_media", { siteId: site.id, mediaId: file.id })).structuredContent.deleted,
      ).toBe(true);
      const after = await callTool(c, "list_media", { siteId: site.id });
      expect(after.structuredContent.images.map((i: Json) => i.id)).not.toContain(file.id);
    });
  });

  test("subscribers (add, list) and campaigns (draft, test, send)", async () => {
    const { key } = await h.seedOrg();
    const site = await h.newSite(key);
    await withClient(key, async (c) => {
      const added = await callTool(c, "add_subscriber", {
        siteId: site.id,
        email: "  Ada@Example.COM ",
        name: "Ada",
      });
      expect(added.structuredContent.created).toBe(true);
      expect(added.structuredContent.subscriber).toMatchObject({
        email: "ada@example.com",
        status: "active",
      });
      const bad = await callTool(c, "add_subscriber", { siteId: site.id, email: "nope" });
      expect(bad.error.code).toBe("VALIDATION_ERROR");
      const listed = await callTool(c, "list_subscribers", { siteId: site.id });
      expect(listed.structuredContent.subscribers.map((s: Json) => s.email)).toEqual(["ada@example.com"]);

      const draft = await callTool(c, "create_campaign", {
        siteId: site.id,
        subject: "Hello",
        html: "<p>Hi</p>",
      });
      const campaignId = draft.structuredContent.campaign.id;
      const test = await callTool(c, "send_test_campaign", {
        siteId: site.id,
        campaignId,
        to: ["qa@example.com"],
      });
      expect(test.structuredContent).toEqual({ accepted: true, to: 1 });
      const sent = await callTool(c, "send_campaign", { siteId: site.id, campaignId });
      expect(sent.isError).toBeUndefined();
      expect(["sending", "sent"]).toContain(sent.structuredContent.campaign.status);
      const again = await callTool(c, "send_campaign", { siteId: site.id, campaignId });
      expect(again.error.code).toBe("VALIDATION_ERROR");
    });
  });

  test("social posts: create_social_post publishes on a connected account, list_social_posts shows it", async () => {
    const { key } = await h.seedOrg();
    const account = await connectSocialAccount(h, key, "threads");
    await withClient(key, async (c) => {
      const made = await callTool(c, "create_social_post", { content: "Launch day", accounts: [account.id] });
      expect(made.isError).toBeUndefined();
      const post = made.structuredContent.post;
      expect(post.targets).toHaveLength(1);
      expect(post.targets[0].status).toBe("published");
      const listed = await callTool(c, "list_social_posts", { limit: 10 });
      expect(listed.structuredContent.posts.map((p: Json) => p.id)).toEqual([post.id]);
      const unknown = await callTool(c, "create_social_post", {
        content: "x",
        accounts: [account.id],
        schedule: "tomorrow",
      });
      expect(unknown.error.code).toBe("VALIDATION_ERROR");
    });
  });
});
