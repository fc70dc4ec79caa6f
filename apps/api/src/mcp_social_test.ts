import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sampleImage } from "@site/domain/testing";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

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
  const client = new Client({ name: "mcp-social-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}
type CallResult = { isError?: boolean; structuredContent?: any };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;

describe("list_social_media", () => {
  test("the organization's social files, newest first, as the HTTP list answers them; read-only; social:write", async () => {
    const { key } = await h.seedOrg();
    const bytes = sampleImage("jpeg", { size: 200 });
    const p = (await (
      await h.call("POST", "/api/v1/social/media/upload", {
        key,
        body: { contentType: "image/jpeg", size: 200 },
      })
    ).json()) as any;
    const u = new URL(p.upload.url);
    await h.app.handle(
      new Request(`http://localhost${u.pathname}${u.search}`, {
        method: "PUT",
        headers: p.upload.headers,
        body: new Blob([bytes]),
      }),
    );
    const client = await connect(key);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "list_social_media")!;
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect((tool.inputSchema.properties as any).limit).toMatchObject({ minimum: 1, maximum: 100 });
      const out = await call(client, "list_social_media", { limit: 10 });
      expect(out.structuredContent.media.map((m: any) => m.id)).toEqual([p.media.id]);
      expect(out.structuredContent.nextCursor).toBeNull();
    } finally {
      await client.close();
    }
    const other = await connect((await h.seedOrg()).key);
    expect((await call(other, "list_social_media")).structuredContent.media).toEqual([]);
    await other.close();
    const noScope = await connect((await h.seedOrg({ scopes: ["content:read"] })).key);
    const denied = await call(noScope, "list_social_media");
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent.error.code).toBe("FORBIDDEN");
    await noScope.close();
  });
});
