import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { upsertTemplate } from "@site/domain";
import { buildTestApp, type TestApp } from "./testing.ts";

let h: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(async () => {
  h = await buildTestApp();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => h.app.handle(req) });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  server.stop(true);
  await h.close();
});

async function connect(key: string) {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

type CallResult = { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;

describe("the MCP server (Streamable HTTP, stateless)", () => {
  test("initialize and tools/list show the five tools with their input schemas", async () => {
    const { key } = await h.seedOrg();
    const client = await connect(key);
    try {
      expect(client.getServerVersion()?.name).toBe("site-content-api");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          "create_site",
          "import_media_from_url",
          "list_media",
          "list_screenshot_styles",
          "list_templates",
        ].sort(),
      );
      const create = tools.find((t) => t.name === "create_site")!;
      expect(create.inputSchema.required).toEqual(expect.arrayContaining(["name", "slug"]));
      expect((create.inputSchema.properties as any).slug.description).toContain("lowercase");
      const imp = tools.find((t) => t.name === "import_media_from_url")!;
      expect(imp.inputSchema.required).toEqual(expect.arrayContaining(["siteId", "url"]));
      expect(imp.description).toContain("publicUrl");
      for (const t of tools) expect(t.description!.length).toBeGreaterThan(60);
    } finally {
      await client.close();
    }
  });

  test("list_templates and create_site call the same rules as the HTTP routes", async () => {
    const org = await h.seedOrg();
    const client = await connect(org.key);
    try {
      const made = await call(client, "create_site", { name: "Via MCP", slug: "via-mcp" });
      expect(made.isError).toBeFalsy();
      expect(made.structuredContent.site).toMatchObject({
        name: "Via MCP",
        slug: "via-mcp",
        public_content_live: false,
      });
      await h.db.execute(
        (await import("drizzle-orm"))
          .sql`insert into pages (site_id, path, title, content) values (${made.structuredContent.site.id}, '/x', 'X', '# x')`,
      );
      await upsertTemplate(h.ctx, {
        slug: "mcp-tpl",
        siteId: made.structuredContent.site.id,
        name: "MCP template",
      });
      const listed = await call(client, "list_templates");
      expect(listed.structuredContent.templates.map((t: any) => t.slug)).toContain("mcp-tpl");
      const clone = await call(client, "create_site", {
        name: "Clone",
        slug: "via-mcp-clone",
        template: "mcp-tpl",
      });
      expect(clone.isError).toBeFalsy();

      const taken = await call(client, "create_site", { name: "Again", slug: "via-mcp" });
      expect(taken.isError).toBe(true);
      expect(taken.structuredContent.error.code).toBe("SLUG_TAKEN");
      expect(taken.content[0]!.text).toStartWith("SLUG_TAKEN");
      const reserved = await call(client, "create_site", { name: "A", slug: "admin" });
      expect(reserved.structuredContent.error.code).toBe("RESERVED_SLUG");
      const missing = await call(client, "create_site", { name: "No slug" });
      expect(missing.structuredContent.error.code).toBe("VALIDATION_ERROR");
      expect(missing.structuredContent.error.details[0].field).toBe("slug");
      const noTemplate = await call(client, "create_site", {
        name: "A",
        slug: "via-mcp-2",
        template: "nope",
      });
      expect(noTemplate.structuredContent.error.code).toBe("TEMPLATE_NOT_FOUND");

      // The session survives tool errors.
      expect((await client.listTools()).tools.length).toBe(5);
    } finally {
      await client.close();
    }
  });

  test("list_media and list_screenshot_styles are read-only views of the site", async () => {
    const org = await h.seedOrg();
    const client = await connect(org.key);
    try {
      const site = (await call(client, "create_site", { name: "Media", slug: "mcp-media" })).structuredContent
        .site;
      const media = await call(client, "list_media", { siteId: site.id });
      expect(media.structuredContent).toEqual({ images: [], nextCursor: null });
      const styles = await call(client, "list_screenshot_styles", { siteId: site.id, featured: true });
      expect(styles.structuredContent.styles.length).toBeGreaterThanOrEqual(4);
      for (const s of styles.structuredContent.styles) expect(s.featured).toBe(true);
      const stranger = await h.seedOrg();
      const other = await connect(stranger.key);
      const denied = await call(other, "list_media", { siteId: site.id });
      expect(denied.structuredContent.error.code).toBe("NOT_FOUND");
      await other.close();
    } finally {
      await client.close();
    }
  });

  test("a tool whose scope the key lacks answers a tool error naming the scope", async () => {
    const org = await h.seedOrg({ scopes: ["content:read"] });
    const client = await connect(org.key);
    try {
      const res = await call(client, "create_site", { name: "A", slug: "no-scope" });
      expect(res.isError).toBe(true);
      expect(res.structuredContent.error.code).toBe("FORBIDDEN");
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
      const res = await fetch(`${base}/mcp`, {
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
    const { key } = await h.seedOrg();
    const rejected = connect("sk_bogus");
    await expect(rejected).rejects.toThrow();
    expect(key).toStartWith("sk_");
  });
});

describe("import_media_from_url over MCP", () => {
  test("imports through the guarded fetch and shows the nested Media embed; a blocked host is a tool error", async () => {
    const { createTlsFixture } = await import("../../../libs/net/src/tls_fixture.ts");
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
    const srv = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => h2.app.handle(req) });
    const org = await h2.seedOrg();
    const client = new Client({ name: "mcp-import", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${srv.port}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${org.key}` } },
      }),
    );
    try {
      const site = (await call(client, "create_site", { name: "Import", slug: "mcp-import" }))
        .structuredContent.site;
      const ok = await call(client, "import_media_from_url", {
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
      const listed = await call(client, "list_media", { siteId: site.id });
      expect(listed.structuredContent.images.map((i: any) => i.name)).toEqual([out.name]);

      const blocked = await call(client, "import_media_from_url", {
        siteId: site.id,
        url: "https://127.0.0.1:1/private.png",
        alt: "x",
      });
      expect(blocked.isError).toBe(true);
      expect(blocked.structuredContent.error.code).toBe("BLOCKED_HOST");
      const notImage = await call(client, "import_media_from_url", {
        siteId: site.id,
        url: `https://127.0.0.1:${images.port}/fake.png`,
      });
      expect(notImage.structuredContent.error.code).toBe("VALIDATION_ERROR");
      const reader = await h2.seedOrg({ scopes: ["content:read"] });
      const readOnly = new Client({ name: "ro", version: "1.0.0" });
      await readOnly.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${srv.port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${reader.key}` } },
        }),
      );
      const denied = await call(readOnly, "import_media_from_url", {
        siteId: site.id,
        url: "https://example.com/a.png",
      });
      expect(denied.structuredContent.error.code).toBe("FORBIDDEN");
      expect(denied.content[0]!.text).toContain("content:write");
      await readOnly.close();
    } finally {
      await client.close();
      srv.stop(true);
      images.stop(true);
      await h2.close();
    }
  });
});
