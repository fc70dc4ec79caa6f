import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { completeRender } from "@site/domain/screenshots";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture } from "@site/net/testing";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

// An agent's whole job over MCP, with the SDK's own client against a listening server: find the site,
// bring in an image (import it; film another), put it on a page, publish.
let h: TestApp;
let api: AppServer;
let images: ReturnType<typeof Bun.serve>;
let base: string;
const png = sampleImage("png", { width: 64, height: 40, size: 3000 });

beforeAll(async () => {
  const tls = createTlsFixture();
  images = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    fetch: () => new Response(png, { headers: { "content-type": "image/png" } }),
  });
  api = listenApp();
  base = api.base;
  h = await buildTestApp({
    env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${images.port}`, PUBLIC_BASE_URL: base },
    fetchTls: { ca: tls.ca },
  });
  api.serve(h);
});
afterAll(async () => {
  api.stop();
  images.stop(true);
  await h.close();
});

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const res = await callTool(client, name, args);
  expect(res.isError, `${name}: ${res.content[0]?.text}`).toBeFalsy();
  return res.structuredContent;
}

describe("an agent finishes a job over MCP", () => {
  test("find a site, import and film images, put them on a page, publish; visitors see signed media", async () => {
    const owner = await h.seedOrg({ credits: 30 });
    // The owner made the site through the REST API; the agent only knows its name.
    const made = await h.call("POST", "/api/v1/sites", {
      key: owner.key,
      body: { name: "Lumen Bakery", slug: `lumen-${Date.now()}` },
    });
    expect(made.status).toBe(201);
    const agent = await mcpClient(api, owner.key);
    try {
      const { sites } = await call(agent, "list_sites");
      const site = sites.find((s: { name: string }) => s.name === "Lumen Bakery");
      expect(site).toBeDefined();

      const empty = await call(agent, "list_media", { siteId: site.id });
      expect(empty.images).toEqual([]);
      const imported = await call(agent, "import_media_from_url", {
        siteId: site.id,
        url: `https://127.0.0.1:${images.port}/croissant.png`,
        alt: "A croissant",
      });
      expect(imported.publicUrl).toStartWith(`/api/media/site-media/${site.id}/`);

      // Film: queue (10 credits), the render daemon finishes it (here: the domain call it makes), poll.
      const queued = await call(agent, "queue_screenshot", {
        siteId: site.id,
        url: "https://example.com/account",
        styleId: "laptop-studio",
      });
      expect(queued).toMatchObject({ estimate: false, status: "pending", credits: 10 });
      const pending = await call(agent, "get_screenshot", { siteId: site.id, renderId: queued.renderId });
      expect(pending.status).toBe("pending");
      const frameKey = imported.path as string;
      await completeRender(h.ctx, queued.renderId, {
        imageKey: frameKey,
        width: 1440,
        height: 900,
        warnings: [
          "login redirect: https://example.com/account redirected to a sign-in form at https://example.com/login; the image shows the sign-in screen.",
        ],
      });
      const done = await call(agent, "get_screenshot", { siteId: site.id, renderId: queued.renderId });
      expect(done.status).toBe("done");
      expect(done.imageUrl).toBe(imported.publicUrl);
      expect(done.displayUrl).toStartWith(`${imported.publicUrl}?k=`);
      expect(done.nextStep).toContain("create_screenshot_login_link");
      expect(done.nextStep).toContain("recapture: true");
      // The embed keeps the frame's shape: 1440×900 is 16:10 (8 / 5), not a cropping 16 / 9.
      expect(done.embed).toContain('aspectRatio="8 / 5"');
      expect(done.embed).not.toContain("16 / 9");
      const preview = await fetch(`${base}${done.displayUrl}`);
      expect(preview.status).toBe(200);
      const link = await call(agent, "create_screenshot_login_link", {
        siteId: site.id,
        url: "https://example.com/account",
      });
      expect(link.loginUrl).toStartWith(`${base}/screenshot-login/`);

      // A page with the image: the tool writes the nested block; a made-up file is refused by name.
      const refused = await callTool(agent, "create_page", {
        siteId: site.id,
        path: "/menu",
        title: "Menu",
        media: [{ url: `/api/media/site-media/${site.id}/missing.png`, alt: "?" }],
      });
      expect(refused.isError).toBe(true);
      expect(refused.error.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(refused.error.details)).toContain("missing.png");
      const outside = await callTool(agent, "create_page", {
        siteId: site.id,
        path: "/menu",
        title: "Menu",
        media: [{ url: "https://elsewhere.example/x.png", alt: "?" }],
      });
      expect(outside.error.details[0].field).toBe("media.0.url");

      const created = await call(agent, "create_page", {
        siteId: site.id,
        path: "/menu",
        title: "Menu",
        content: "# Our menu",
        media: [{ url: imported.publicUrl, alt: "A croissant" }],
      });
      expect(created.page.content).toContain("# Our menu");
      expect(created.page.content).toMatch(
        /<Column fillWidth paddingTop="l" paddingBottom="l">\s*<Column fillWidth>\s*<Media data-visual-block="image"/,
      );
      expect(created.warnings).toEqual([]);
      const updated = await call(agent, "update_page", {
        siteId: site.id,
        pageId: created.page.id,
        title: "Menu and prices",
      });
      expect(updated.page.title).toBe("Menu and prices");
      const pages = await call(agent, "list_pages", { siteId: site.id });
      expect(pages.pages.map((p: { path: string }) => p.path)).toContain("/menu");

      const published = await call(agent, "publish_site", { siteId: site.id });
      expect(published.site.public_content_live).toBe(true);

      const visitor = await fetch(`${base}/api/v1/public/sites/${site.slug}/pages`);
      expect(visitor.status).toBe(200);
      const menu = ((await visitor.json()) as { pages: { path: string; content: string }[] }).pages.find(
        (p) => p.path === "/menu",
      )!;
      const signed = /src="([^"]+)"/.exec(menu.content)![1]!;
      expect(signed).toContain("?k=");
      const bytes = await fetch(signed.startsWith("http") ? signed : `${base}${signed}`);
      expect(bytes.status).toBe(200);
      expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(png);
    } finally {
      await agent.close();
    }
  }, 60_000);
});
