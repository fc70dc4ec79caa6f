import { describe, expect, test } from "bun:test";
import { upsertTemplate } from "@site/domain/sites";
import { callTool, listenApp, mcpClient, mcpTestBed } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { TOOLS } from "./mcp_tools.ts";

const bed = mcpTestBed();

describe("the MCP server (Streamable HTTP, stateless)", () => {
  test("initialize and tools/list show every tool with its limits in the input schema", async () => {
    const { key } = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, key);
    try {
      expect(client.getServerVersion()?.name).toBe("site-content-api");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          "create_page",
          "create_screenshot_login_link",
          "create_site",
          "get_screenshot",
          "import_media_from_url",
          "list_media",
          "list_pages",
          "list_screenshot_styles",
          "list_sites",
          "list_templates",
          "publish_site",
          "queue_screenshot",
          "unpublish_site",
          "update_page",
          // site building (mcp_site_building_tools_test.ts)
          "define_collection",
          "get_chrome_strings",
          "get_site_layout",
          "list_collection_items",
          "reorder_pages",
          "set_chrome_strings",
          "translate_links",
          "update_site_layout",
          "upsert_collection_items",
          // newsletters (mcp_newsletter_tools_test.ts)
          "create_campaign",
          "list_campaigns",
          // social (mcp_social_test.ts)
          "list_social_media",
          // device clips
          "create_clip",
          "get_clip",
          // the jobs of issue 29 (mcp_jobs_test.ts)
          "upload_media",
          "delete_media",
          "delete_page",
          "add_subscriber",
          "list_subscribers",
          "send_test_campaign",
          "send_campaign",
          "list_social_posts",
          "create_social_post",
          // every job without REST (issue 36; webhook tools need webhooks:write, which this key lacks)
          "get_site",
          "rename_site",
          "delete_site",
          "get_campaign",
          "cancel_campaign",
          "resume_campaign",
          "list_social_accounts",
          "connect_social_account",
          "start_social_connection",
          "confirm_social_connection",
          "disconnect_social_account",
          // social posts on their own clock (social_schedule_test.ts)
          "get_social_post",
          "update_social_post",
          "cancel_social_post",
          // the parity table's gaps closed (mcp_site_content_test.ts, mcp_newsletter_edit_test.ts,
          // mcp_social_library_test.ts; the webhook tools need webhooks:write)
          "get_page",
          "set_default_locale",
          "list_broken_links",
          "list_collections",
          "delete_collection",
          "reorder_collection_items",
          "update_collection_item",
          "delete_collection_item",
          "get_subscriber",
          "reactivate_subscriber",
          "delete_subscriber",
          "update_campaign",
          "delete_campaign",
          "revoke_campaign_media",
          "get_tiktok_creator_info",
          "delete_social_post",
          "add_social_media",
          "delete_social_media",
          "generate_social_images",
          // the performance report (mcp_social_performance_test.ts)
          "get_social_performance",
        ].sort(),
      );
      const byName = (n: string) => tools.find((t) => t.name === n)!;
      const prop = (n: string, p: string) => (byName(n).inputSchema.properties as any)[p];
      const create = byName("create_site");
      expect(create.inputSchema.required).toEqual(expect.arrayContaining(["name", "slug"]));
      expect(prop("create_site", "slug").maxLength).toBe(63);
      const slug = new RegExp(prop("create_site", "slug").pattern);
      expect(slug.test("acme-bakery")).toBe(true);
      expect(slug.test("-bad")).toBe(false);
      expect(prop("create_site", "name")).toMatchObject({ minLength: 1, maxLength: 100 });
      expect(prop("create_site", "slug").description).toContain("lowercase");
      expect(prop("list_media", "limit")).toMatchObject({ minimum: 1, maximum: 100 });
      expect(prop("queue_screenshot", "viewportWidth")).toMatchObject({ minimum: 320, maximum: 3840 });
      expect(prop("queue_screenshot", "framing")).toMatchObject({ minimum: 0.4, maximum: 3 });
      expect(prop("create_page", "path").maxLength).toBe(200);
      expect(new RegExp(prop("create_page", "path").pattern).test("/about/team")).toBe(true);
      expect(
        new RegExp(prop("create_page", "media").items.properties.url.pattern).test("/api/media/a/b.png"),
      ).toBe(true);
      expect(byName("create_page").description).toContain('<Media data-visual-block="image"');
      const imp = byName("import_media_from_url");
      expect(imp.inputSchema.required).toEqual(expect.arrayContaining(["siteId", "url"]));
      expect(imp.description).toContain("publicUrl");
      expect(imp.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
      for (const n of ["list_sites", "list_pages", "list_media", "list_screenshot_styles", "get_screenshot"])
        expect(byName(n).annotations?.readOnlyHint, n).toBe(true);
      for (const t of tools) {
        expect(t.description!.length).toBeGreaterThan(60);
        for (const [name, p] of Object.entries((t.inputSchema.properties ?? {}) as Record<string, any>)) {
          if (p.type !== "string" || p.enum || p.const) continue;
          expect(p.maxLength, `${t.name}.${name} has a maxLength`).toBeGreaterThan(0);
        }
      }
    } finally {
      await client.close();
    }
  });

  test("read tools work with a content:read key; writes and styles name the scope they need", async () => {
    const owner = await bed.h.seedOrg();
    const writer = await mcpClient(bed.mcp, owner.key);
    const site = (await callTool(writer, "create_site", { name: "Read", slug: "mcp-read" })).structuredContent
      .site;
    await writer.close();
    const { createApiKey } = await import("@site/domain/core");
    const reader = await createApiKey(bed.h.ctx, {
      orgId: owner.org.id,
      userId: owner.user.id,
      scopes: ["content:read"],
    });
    const client = await mcpClient(bed.mcp, reader.key);
    try {
      const sites = await callTool(client, "list_sites");
      expect(sites.structuredContent.sites.map((s: any) => s.id)).toContain(site.id);
      for (const [name, args] of [
        ["list_pages", { siteId: site.id }],
        ["list_media", { siteId: site.id }],
      ] as const) {
        const res = await callTool(client, name, args);
        expect(res.isError, `${name}: ${res.content[0]?.text}`).toBeFalsy();
      }
      // Styles need content:write, as their REST route does (decision 0750).
      const styles = await callTool(client, "list_screenshot_styles", { siteId: site.id, featured: true });
      expect(styles.error.code).toBe("FORBIDDEN");
      expect(styles.content[0]!.text).toContain("content:write");
      const page = await callTool(client, "create_page", {
        siteId: site.id,
        path: "/x",
        title: "X",
        content: "",
      });
      expect(page.error.code).toBe("FORBIDDEN");
      expect(page.content[0]!.text).toContain("content:write");
      const tooLong = await callTool(client, "list_sites", { limit: 1000 });
      expect(tooLong.error).toMatchObject({ code: "VALIDATION_ERROR" });
      expect(tooLong.error.details[0].field).toBe("limit");
    } finally {
      await client.close();
    }
  });

  test("a tool's input is its REST route's model: the same properties and bounds as the OpenAPI body or query (and the limits a schema can state)", async () => {
    const { key } = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, key);
    try {
      const { tools } = await client.listTools();
      const input = (name: string) => tools.find((t) => t.name === name)!.inputSchema as any;
      const doc = (await (await bed.h.call("GET", "/swagger/json")).json()) as any;
      const body = (path: string) =>
        doc.paths[path].post.requestBody.content["application/json"].schema.properties;
      // Every property and bound of the route's model is in the tool's input; the tool may state more
      // (maxLength, a slug or URL pattern) that the route checks in the domain with its own error codes.
      // (OpenAPI 3.1 writes a nullable string as `type: [string, null]`, the tool's JSON Schema as anyOf.)
      const nullable = (s: any) => {
        const [only, ...rest] = (s.anyOf ?? []).filter((x: any) => x.type !== "null");
        return s.anyOf && only && rest.length === 0 ? { ...only, type: [only.type, "null"] } : s;
      };
      const sameModel = (tool: Record<string, any>, route: Record<string, any>) => {
        expect(Object.keys(tool).sort()).toEqual(Object.keys(route).sort());
        for (const [name, schema] of Object.entries(route))
          expect(nullable(tool[name]), name).toMatchObject(schema);
      };
      // A keyed tool's `idempotencyKey` is REST's Idempotency-Key header, not a body property (1415).
      const { idempotencyKey: siteKey, ...site } = input("create_site").properties;
      expect(siteKey).toMatchObject({ type: "string", maxLength: 255 });
      sameModel(site, body("/api/v1/sites"));
      expect(input("create_site").properties.slug.pattern).toBeDefined();
      const { siteId, idempotencyKey: _importKey, ...imp } = input("import_media_from_url").properties;
      expect(siteId).toBeDefined();
      sameModel(imp, body("/api/v1/sites/{siteId}/media/import-url"));
      // Query parameters are text on the wire; their integer form keeps the model's bounds.
      const limit = doc.paths["/api/v1/sites/{siteId}/media"].get.parameters.find(
        (p: any) => p.name === "limit",
      ).schema;
      const toolLimit = input("list_media").properties.limit;
      expect(toolLimit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
      expect(limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    } finally {
      await client.close();
    }
  });

  test("list_templates and create_site call the same rules as the HTTP routes", async () => {
    const org = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const made = await callTool(client, "create_site", { name: "Via MCP", slug: "via-mcp" });
      expect(made.isError).toBeFalsy();
      expect(made.structuredContent.site).toMatchObject({
        name: "Via MCP",
        slug: "via-mcp",
        public_content_live: false,
      });
      await bed.h.db.execute(
        (await import("drizzle-orm"))
          .sql`insert into pages (site_id, path, title, content, position) values (${made.structuredContent.site.id}, '/x', 'X', '# x', 1)`,
      );
      await upsertTemplate(bed.h.ctx, {
        slug: "mcp-tpl",
        siteId: made.structuredContent.site.id,
        name: "MCP template",
      });
      const listed = await callTool(client, "list_templates");
      expect(listed.structuredContent.templates.map((t: any) => t.slug)).toContain("mcp-tpl");
      const clone = await callTool(client, "create_site", {
        name: "Clone",
        slug: "via-mcp-clone",
        template: "mcp-tpl",
      });
      expect(clone.isError).toBeFalsy();

      const taken = await callTool(client, "create_site", { name: "Again", slug: "via-mcp" });
      expect(taken.isError).toBe(true);
      expect(taken.error.code).toBe("SLUG_TAKEN");
      expect(taken.content[0]!.text).toStartWith("SLUG_TAKEN");
      const reserved = await callTool(client, "create_site", { name: "A", slug: "admin" });
      expect(reserved.error.code).toBe("RESERVED_SLUG");
      const missing = await callTool(client, "create_site", { name: "No slug" });
      expect(missing.error.code).toBe("VALIDATION_ERROR");
      expect(missing.error.details[0].field).toBe("slug");
      const noTemplate = await callTool(client, "create_site", {
        name: "A",
        slug: "via-mcp-2",
        template: "nope",
      });
      expect(noTemplate.error.code).toBe("TEMPLATE_NOT_FOUND");

      // The session survives tool errors.
      // The default test key carries every scope but webhooks:write.
      expect((await client.listTools()).tools.length).toBe(
        TOOLS.filter((t) => t.scope !== "webhooks:write").length,
      );
    } finally {
      await client.close();
    }
  });

  test("list_media and list_screenshot_styles are read-only views of the site", async () => {
    const org = await bed.h.seedOrg();
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const site = (await callTool(client, "create_site", { name: "Media", slug: "mcp-media" }))
        .structuredContent.site;
      const media = await callTool(client, "list_media", { siteId: site.id });
      expect(media.structuredContent).toEqual({ images: [], nextCursor: null });
      const styles = await callTool(client, "list_screenshot_styles", { siteId: site.id, featured: true });
      expect(styles.structuredContent.styles.length).toBeGreaterThanOrEqual(4);
      for (const s of styles.structuredContent.styles) expect(s.featured).toBe(true);
      const stranger = await bed.h.seedOrg();
      const other = await mcpClient(bed.mcp, stranger.key);
      const denied = await callTool(other, "list_media", { siteId: site.id });
      expect(denied.error.code).toBe("NOT_FOUND");
      await other.close();
    } finally {
      await client.close();
    }
  });

  test("a tool whose scope the key lacks answers a tool error naming the scope", async () => {
    const org = await bed.h.seedOrg({ scopes: ["content:read"] });
    const client = await mcpClient(bed.mcp, org.key);
    try {
      const res = await callTool(client, "create_site", { name: "A", slug: "no-scope" });
      expect(res.isError).toBe(true);
      expect(res.error.code).toBe("FORBIDDEN");
      expect(res.content[0]!.text).toContain("sites:write");
    } finally {
      await client.close();
    }
  });

  test("no key or a bad key is 401 at the HTTP level, in the contract's error body", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    for (const headers of [{}, { authorization: "Bearer sk_bogus" }] as Record<string, string>[]) {
      const res = await fetch(`${bed.mcp.base}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(init),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe("UNAUTHORIZED");
    }
    const { key } = await bed.h.seedOrg();
    const rejected = mcpClient(bed.mcp, "sk_bogus");
    await expect(rejected).rejects.toThrow();
    expect(key).toStartWith("sk_");
  });
});

describe("import_media_from_url over MCP", () => {
  test("imports through the guarded fetch and shows the nested Media embed; a blocked host is a tool error", async () => {
    const { createTlsFixture } = await import("@site/net/testing");
    const { createCanvas } = await import("@napi-rs/canvas");
    const tls = createTlsFixture();
    const canvas = createCanvas(32, 24);
    const g = canvas.getContext("2d");
    g.fillStyle = "#2563eb";
    g.fillRect(0, 0, 32, 24);
    const png = canvas.toBuffer("image/png");
    const images = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: tls.cert, key: tls.key },
      fetch: (req) =>
        new URL(req.url).pathname === "/logo.png"
          ? new Response(new Uint8Array(png), { headers: { "content-type": "image/png" } })
          : new Response("<svg xmlns='http://www.w3.org/2000/svg'/>", {
              headers: { "content-type": "image/png" },
            }),
    });
    const h2 = await buildTestApp({
      env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${images.port}` },
      fetchTls: { ca: tls.ca },
    });
    const srv = listenApp(h2);
    const org = await h2.seedOrg();
    const client = await mcpClient(srv, org.key);
    try {
      const site = (await callTool(client, "create_site", { name: "Import", slug: "mcp-import" }))
        .structuredContent.site;
      const ok = await callTool(client, "import_media_from_url", {
        siteId: site.id,
        url: `https://127.0.0.1:${images.port}/logo.png`,
        alt: "Acme logo",
      });
      expect(ok.isError).toBeFalsy();
      const out = ok.structuredContent;
      expect(out.path).toStartWith(`site-media/${site.id}/`);
      expect(out.publicUrl).toContain(`/api/media/${out.path}`);
      expect(out.embed).toContain('data-visual-block="image"');
      expect(out.embed).toContain(`src="${out.publicUrl}"`);
      expect(out.embed).toMatch(
        /<Column fillWidth paddingTop="l" paddingBottom="l">\s*<Column fillWidth>\s*<Media /,
      );
      const listed = await callTool(client, "list_media", { siteId: site.id });
      expect(listed.structuredContent.images.map((i: any) => i.name)).toEqual([out.name]);

      const blocked = await callTool(client, "import_media_from_url", {
        siteId: site.id,
        url: "https://127.0.0.1:1/private.png",
        alt: "x",
      });
      expect(blocked.isError).toBe(true);
      expect(blocked.error.code).toBe("BLOCKED_HOST");
      const notImage = await callTool(client, "import_media_from_url", {
        siteId: site.id,
        url: `https://127.0.0.1:${images.port}/fake.png`,
      });
      expect(notImage.error.code).toBe("VALIDATION_ERROR");
      const reader = await h2.seedOrg({ scopes: ["content:read"] });
      const readOnly = await mcpClient(srv, reader.key);
      const denied = await callTool(readOnly, "import_media_from_url", {
        siteId: site.id,
        url: "https://example.com/a.png",
      });
      expect(denied.error.code).toBe("FORBIDDEN");
      expect(denied.content[0]!.text).toContain("content:write");
      await readOnly.close();
    } finally {
      await client.close();
      srv.stop();
      images.stop(true);
      await h2.close();
    }
  });
});

describe("stateless MCP: GET and DELETE answer 405, nothing outlives a request", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
  };

  test("GET (even asking for an event stream) and DELETE answer 405 at once with Allow: POST", async () => {
    const { key } = await bed.h.seedOrg({ scopes: ["content:read"] });
    for (const method of ["GET", "DELETE"]) {
      const started = Date.now();
      const res = await fetch(`${bed.mcp.base}/mcp`, {
        method,
        headers: { accept: "text/event-stream", authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(3000),
      });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("METHOD_NOT_ALLOWED");
      expect(body.error.message).toContain("POST");
      expect(Date.now() - started).toBeLessThan(1000);
      // Like every non-public route, no key is 401 first.
      const anonymous = await fetch(`${bed.mcp.base}/mcp`, { method, signal: AbortSignal.timeout(3000) });
      expect(anonymous.status).toBe(401);
    }
  });

  test("2,000 POSTs and 300 abandoned GETs leave no MCP server or transport alive", async () => {
    // What is measured is the SDK objects' lifetime: count every Server and transport that connects,
    // and every one the garbage collector has reclaimed (FinalizationRegistry after Bun.gc(true)).
    const { Server } = await import("@modelcontextprotocol/sdk/server/index.js");
    let created = 0;
    let collected = 0;
    const registry = new FinalizationRegistry<null>(() => {
      collected++;
    });
    const original = Server.prototype.connect;
    Server.prototype.connect = function (this: InstanceType<typeof Server>, transport) {
      created += 2;
      registry.register(this, null);
      registry.register(transport, null);
      return original.call(this, transport);
    };
    const { key } = await bed.h.seedOrg({ scopes: ["content:read"] });
    const headers = {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    try {
      const post = async (i: number) => {
        const body = i % 2 === 0 ? initialize : { jsonrpc: "2.0", id: i, method: "tools/list", params: {} };
        const res = await fetch(`${bed.mcp.base}/mcp`, {
          method: "POST",
          headers,
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      };
      const abandonedGet = async () => {
        const ctrl = new AbortController();
        const res = fetch(`${bed.mcp.base}/mcp`, {
          headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
          signal: ctrl.signal,
        }).catch(() => null);
        setTimeout(() => ctrl.abort(), 20);
        await res;
      };
      for (let round = 0; round < 100; round++) {
        const batch: Promise<void>[] = [];
        for (let i = 0; i < 20; i++) batch.push(post(round * 20 + i));
        for (let i = 0; i < 3; i++) batch.push(abandonedGet());
        await Promise.all(batch);
      }
      expect(created).toBeGreaterThanOrEqual(4000);
      const deadline = Date.now() + 10_000;
      while (created - collected > 40 && Date.now() < deadline) {
        Bun.gc(true);
        await Bun.sleep(50);
      }
      // Conservative stack scanning may pin a handful; a leak pins one pair per request.
      expect(created - collected).toBeLessThanOrEqual(40);
    } finally {
      Server.prototype.connect = original;
    }
  }, 120_000);
});

describe("MCP checks the Origin of browser requests (DNS rebinding)", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
  });
  const post = (app: TestApp, key: string, origin?: string) =>
    app.call("POST", "/mcp", {
      key,
      body: initialize,
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...(origin ? { origin } : {}),
      },
    });

  test("a foreign Origin gets 403 in the contract's error body; the server's own and no Origin pass", async () => {
    const { key } = await bed.h.seedOrg({ scopes: ["content:read"] });
    const own = new URL(bed.h.ctx.config.publicBaseUrl).origin;
    for (const foreign of ["https://evil.example", "http://127.0.0.1:1", "null", `${own}.evil.example`]) {
      const res = await post(bed.h, key, foreign);
      expect(res.status).toBe(403);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("FORBIDDEN");
      expect(body.error.message).toContain("MCP_ALLOWED_ORIGINS");
    }
    // The check comes before the key is even looked at, and covers every method.
    expect((await post(bed.h, "sk_bogus", "https://evil.example")).status).toBe(403);
    expect((await bed.h.call("GET", "/mcp", { headers: { origin: "https://evil.example" } })).status).toBe(
      403,
    );
    expect((await post(bed.h, key, own)).status).toBe(200);
    expect((await post(bed.h, key)).status).toBe(200);
  });

  test("MCP_ALLOWED_ORIGINS admits exactly the origins it lists", async () => {
    const h2 = await buildTestApp({
      env: {
        PUBLIC_BASE_URL: "https://api.example.test",
        MCP_ALLOWED_ORIGINS: "https://app.example.test,http://localhost:5173",
      },
    });
    try {
      const { key } = await h2.seedOrg({ scopes: ["content:read"] });
      for (const ok of ["https://api.example.test", "https://app.example.test", "http://localhost:5173"])
        expect((await post(h2, key, ok)).status).toBe(200);
      for (const no of ["http://app.example.test", "https://app.example.test:8443", "http://localhost:5174"])
        expect((await post(h2, key, no)).status).toBe(403);
    } finally {
      await h2.close();
    }
  });
});
