import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { idempotencyKeys, mediaFiles, organizations, screenshotRenders, sites } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture } from "@site/net/testing";
import { and, eq, sql } from "drizzle-orm";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { KEYED_TOOLS } from "./mcp_idempotency.ts";
import { TOOLS } from "./mcp_tools.ts";

// MCP tools that charge, send or create take `idempotencyKey` with REST's meaning and its store
// (CONTRACT "Bounded: retries, replays, images"; issues 36 and 38; decision 1415).
type Json = any;
let h: TestApp;
let mcp: AppServer;
const tls = createTlsFixture();
/** Held image answers: the first request of a path waits for its gate; later ones answer at once. */
const gates = new Map<string, { arrived: () => void; open: Promise<void>; release: () => void }>();
const images = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: tls.cert, key: tls.key },
  async fetch(req) {
    const gate = gates.get(new URL(req.url).pathname);
    if (gate) {
      gates.delete(new URL(req.url).pathname);
      gate.arrived();
      await gate.open;
    }
    return new Response(sampleImage("png", { width: 8, height: 8, size: 2000 }), {
      headers: { "content-type": "image/png" },
    });
  },
});
beforeAll(async () => {
  h = await buildTestApp({
    env: {
      CHROMIUM_PATH: "/bin/true",
      FFMPEG_PATH: "/bin/true",
      FETCH_ALLOW_HOSTS: `localhost:${images.port}`,
    },
    fetchTls: { ca: tls.ca },
  });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  images.stop(true);
  await h.close();
});
const uniq = () => Math.random().toString(36).slice(2, 10);

describe("MCP: idempotencyKey on tools that charge, send or create", () => {
  test("every keyed tool exists and writes (a renamed tool cannot silently lose its key)", () => {
    for (const name of KEYED_TOOLS)
      expect({ name, readOnly: TOOLS.find((t) => t.name === name)?.readOnly }).toEqual({
        name,
        readOnly: false,
      });
  });

  test("a retried queue_screenshot with its key is charged once and answers the first result; another call under the key is refused", async () => {
    const o = await h.seedOrg({ credits: 100 });
    const site = await h.newSite(o.key);
    const client = await mcpClient(mcp, o.key);
    try {
      const { tools } = await client.listTools();
      const schema = tools.find((t) => t.name === "queue_screenshot")!.inputSchema as Json;
      expect(schema.properties.idempotencyKey).toMatchObject({ type: "string", maxLength: 255 });
      expect(
        (tools.find((t) => t.name === "list_sites")!.inputSchema as Json).properties?.idempotencyKey,
      ).toBeUndefined();
      const key = `k-${uniq()}`;
      const args = { siteId: site.id, url: "https://example.com/", idempotencyKey: key };
      const first = await callTool(client, "queue_screenshot", args);
      expect(first.isError).toBeFalsy();
      const again = await callTool(client, "queue_screenshot", args);
      expect(again.isError).toBeFalsy();
      expect(again.structuredContent).toEqual(first.structuredContent);
      const renders = await h.db
        .select({ id: screenshotRenders.id })
        .from(screenshotRenders)
        .where(eq(screenshotRenders.orgId, o.org.id));
      expect(renders.map((r) => r.id)).toEqual([first.structuredContent.renderId]);
      // One charge for the two calls.
      const [org] = await h.db
        .select({ credits: organizations.credits })
        .from(organizations)
        .where(eq(organizations.id, o.org.id));
      expect(org!.credits).toBe(90);
      // The same key with other arguments: REST's 409 CONFLICT, as a tool error.
      const other = await callTool(client, "queue_screenshot", { ...args, url: "https://example.org/" });
      expect(other.isError).toBe(true);
      expect(other.error.code).toBe("CONFLICT");
      // One store: the key's row is the API key's, as REST's are.
      const rows = await h.db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.orgId, o.org.id), eq(idempotencyKeys.key, key)));
      expect(rows).toHaveLength(1);
      expect(rows[0]!.apiKeyId).toBe(o.keyId);
    } finally {
      await client.close();
    }
  });

  test("create_site retried with its key creates one site and answers it again (never SLUG_TAKEN); without a key each call runs", async () => {
    const o = await h.seedOrg();
    const client = await mcpClient(mcp, o.key);
    try {
      const slug = `mcp-${uniq()}`;
      const args = { name: "Agent site", slug, idempotencyKey: `k-${uniq()}` };
      const first = await callTool(client, "create_site", args);
      expect(first.isError).toBeFalsy();
      const again = await callTool(client, "create_site", args);
      expect(again.isError).toBeFalsy();
      expect(again.structuredContent).toEqual(first.structuredContent);
      expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(1);
      const unkeyed = await callTool(client, "create_site", { name: "Agent site", slug });
      expect(unkeyed.error.code).toBe("SLUG_TAKEN");
      const bad = await callTool(client, "create_site", {
        name: "X",
        slug: `x-${uniq()}`,
        idempotencyKey: "",
      });
      expect(bad.error.code).toBe("VALIDATION_ERROR");
    } finally {
      await client.close();
    }
  });

  test("the answer commits with the work: a call that lost its key to a retry (its lease lapsed) rolls its work back; the retry's import is the one file", async () => {
    const o = await h.seedOrg();
    const site = await h.newSite(o.key);
    const path = `/slow-${uniq()}.png`;
    let arrived!: () => void;
    const fetching = new Promise<void>((r) => {
      arrived = r;
    });
    let release!: () => void;
    const open = new Promise<void>((r) => {
      release = r;
    });
    gates.set(path, { arrived, open, release });
    const client = await mcpClient(mcp, o.key);
    try {
      const key = `k-${uniq()}`;
      const args = { siteId: site.id, url: `https://localhost:${images.port}${path}`, idempotencyKey: key };
      const first = callTool(client, "import_media_from_url", args);
      await fetching;
      // The first call's process stops renewing (as a stalled one would): its lease runs out.
      await h.db
        .update(idempotencyKeys)
        .set({ lockedUntil: sql`now()` as never })
        .where(and(eq(idempotencyKeys.apiKeyId, o.keyId), eq(idempotencyKeys.key, key)));
      const retry = await callTool(client, "import_media_from_url", args);
      expect(retry.isError).toBeFalsy();
      release();
      const late = await first;
      // The first call's work found its key gone inside its transaction: nothing of it was kept.
      expect(late.error.code).toBe("CONFLICT");
      expect(late.error.message).toContain("idempotencyKey");
      expect(late.error.message).not.toContain("Idempotency-Key");
      const files = await h.db
        .select({ key: mediaFiles.key })
        .from(mediaFiles)
        .where(eq(mediaFiles.siteId, site.id));
      expect(files.map((f) => f.key)).toEqual([retry.structuredContent.path]);
      // The key answers the retry's result from now on.
      const again = await callTool(client, "import_media_from_url", args);
      expect(again.structuredContent).toEqual(retry.structuredContent);
    } finally {
      release();
      await client.close();
    }
  });
});
