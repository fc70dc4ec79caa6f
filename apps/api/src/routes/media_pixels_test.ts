import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mediaFiles, mediaUploads, organizations, socialMedia } from "@site/db";
import { libraryKey } from "@site/domain/media";
import { pixelBombPng } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { and, eq } from "drizzle-orm";
import { callTool, listenApp, mcpClient } from "../../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { connectSocialAccount, fetchMediaFromApp, uploadSocialMedia } from "../../testing/social.ts";

// Issue 38, decompression bomb: a small PNG declaring 12000×12000 (576 MB once decoded to RGBA) is
// refused from its header at every path (CONTRACT.md "Bounded: retries, replays, images"): an upload
// lands as refused (not listed), an import or a social registration answers 400 VALIDATION_ERROR, and a
// conversion for a platform never decodes one that landed before the limit.

type Json = any;
const BOMB = pixelBombPng(12000, 12000);
/** A JPEG of 100×100 whose SOF follows 10 APP1 segments of 64 KB (EXIF, XMP): 655 KB of metadata first. */
function lateSofJpeg(): Uint8Array<ArrayBuffer> {
  const app1 = [0xff, 0xe1, 0xff, 0xff, ...new Array(0xfffd).fill(0x20)];
  const sof = [0xff, 0xc0, 0, 11, 8, 0, 100, 0, 100, 1, 1, 0x11, 0];
  return new Uint8Array([0xff, 0xd8, ...Array.from({ length: 10 }, () => app1).flat(), ...sof, 0xff, 0xd9]);
}

let tls: TlsFixture;
let host: ReturnType<typeof Bun.serve>;
let fake: FakePlatforms;
let h: TestApp;
beforeAll(async () => {
  tls = createTlsFixture();
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/bomb.png") return new Response(BOMB, { headers: { "content-type": "image/png" } });
      if (path === "/late-sof.jpg") return new Response(lateSofJpeg());
      if (path === "/fine.png") return new Response(pixelBombPng(64, 48));
      return new Response("no", { status: 404 });
    },
  });
  fake = startFakePlatforms();
  h = await buildTestApp({
    fetchTls: { ca: tls.ca },
    env: { ...fake.env, FETCH_ALLOW_HOSTS: `localhost:${host.port}` },
  });
  fetchMediaFromApp(fake, h);
});
afterAll(async () => {
  host.stop(true);
  fake.close();
  await h.close();
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Json });
const storageUsed = async (orgId: string) =>
  (await h.db.select().from(organizations).where(eq(organizations.id, orgId)))[0]!.storageUsedBytes;

/** The PUT of a signed upload to the API's own route (local-disk store), which lands it. */
const put = (upload: Json, bytes: Uint8Array) => {
  const u = new URL(upload.url);
  return h.app.handle(
    new Request(`http://localhost${u.pathname}${u.search}`, {
      method: "PUT",
      headers: upload.headers,
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    }),
  );
};

const expectPixelRefusal = (r: { status: number; body: Json }) => {
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe("VALIDATION_ERROR");
  expect(r.body.error.message).toContain("12000×12000");
  expect(r.body.error.message).toContain("MEDIA_MAX_PIXELS");
};

describe("a PNG declaring 12000×12000 is refused before it is decoded", () => {
  test("upload landing: the PUT answers 400, the bytes land as refused, nothing is listed or counted", async () => {
    const { key, org } = await h.seedOrg();
    const site = await h.newSite(key);
    const prep = await json(
      await h.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
        key,
        body: { contentType: "image/png", size: BOMB.byteLength },
      }),
    );
    expect(prep.status).toBe(201);
    expectPixelRefusal(await json(await put(prep.body.upload, BOMB)));
    const done = await json(
      await h.call("POST", `/api/v1/sites/${site.id}/media/upload/${prep.body.name}/complete`, { key }),
    );
    expect(done.status).toBe(400);
    expect(done.body.error.message).toContain("refused");
    const [row] = await h.db.select().from(mediaUploads).where(eq(mediaUploads.key, prep.body.path));
    expect(row?.status).toBe("rejected");
    expect(await h.store.head(prep.body.path)).toBeNull();
    const list = await json(await h.call("GET", `/api/v1/sites/${site.id}/media`, { key }));
    expect(list.body.images).toEqual([]);
    expect(await storageUsed(org.id)).toBe(0);
  });

  test("MCP upload_media (bytes in the call): VALIDATION_ERROR, nothing stored or listed", async () => {
    const { key, org } = await h.seedOrg();
    const site = await h.newSite(key);
    const mcp = listenApp(h);
    const client = await mcpClient(mcp, key);
    try {
      const r = await callTool(client, "upload_media", {
        siteId: site.id,
        dataBase64: Buffer.from(BOMB).toString("base64"),
      });
      expect(r.isError).toBe(true);
      expect(r.error.code).toBe("VALIDATION_ERROR");
      expect(r.error.message).toContain("MEDIA_MAX_PIXELS");
    } finally {
      await client.close();
      mcp.stop();
    }
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toEqual([]);
    expect(await storageUsed(org.id)).toBe(0);
  });

  test("URL import from a 127.0.0.1 server: 400 VALIDATION_ERROR, nothing stored or listed", async () => {
    const { key, org } = await h.seedOrg();
    const site = await h.newSite(key);
    const r = await json(
      await h.call("POST", `/api/v1/sites/${site.id}/media/import-url`, {
        key,
        body: { url: `https://localhost:${host.port}/bomb.png` },
      }),
    );
    expectPixelRefusal(r);
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id))).toEqual([]);
    const list = await json(await h.call("GET", `/api/v1/sites/${site.id}/media`, { key }));
    expect(list.body.images).toEqual([]);
    expect(await storageUsed(org.id)).toBe(0);
  });

  test("URL import: a JPEG whose SOF follows 655 KB of metadata is read to its SOF and lands with its size", async () => {
    const { key } = await h.seedOrg();
    const site = await h.newSite(key);
    const r = await json(
      await h.call("POST", `/api/v1/sites/${site.id}/media/import-url`, {
        key,
        body: { url: `https://localhost:${host.port}/late-sof.jpg` },
      }),
    );
    expect(r.status).toBe(201);
    const [row] = await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, site.id));
    expect([row?.width, row?.height]).toEqual([100, 100]);
  });

  test("social upload: the PUT answers 400, the file lands as refused and is not listed", async () => {
    const { key, org } = await h.seedOrg();
    const prep = await json(
      await h.call("POST", "/api/v1/social/media/upload", {
        key,
        body: { contentType: "image/png", size: BOMB.byteLength },
      }),
    );
    expect(prep.status).toBe(201);
    expectPixelRefusal(await json(await put(prep.body.upload, BOMB)));
    const [row] = await h.db.select().from(socialMedia).where(eq(socialMedia.id, prep.body.media.id));
    expect(row?.status).toBe("rejected");
    const list = await json(await h.call("GET", "/api/v1/social/media", { key }));
    expect(list.body.media).toEqual([]);
    expect(await storageUsed(org.id)).toBe(0);
  });

  /** A site file that landed before the limit existed: its bytes in the store and its row, as then. */
  async function landedBeforeTheLimit(siteId: string, sized: boolean) {
    const name = `old-${Math.random().toString(36).slice(2, 8)}.png`;
    const key = libraryKey(siteId, name);
    const stored = await h.store.put(key, BOMB, { contentType: "image/png" });
    await h.db.insert(mediaFiles).values({
      siteId,
      key,
      name,
      contentType: "image/png",
      size: BOMB.byteLength,
      width: sized ? 12000 : null,
      height: sized ? 12000 : null,
      source: "upload",
      etag: stored.etag,
      createdAt: new Date(),
    });
    return `/api/media/${key}`;
  }

  test("social registration of a site file over the limit: 400 VALIDATION_ERROR (its row's size, or its header where the row has none)", async () => {
    const { key } = await h.seedOrg();
    const site = await h.newSite(key);
    for (const sized of [true, false]) {
      const url = await landedBeforeTheLimit(site.id, sized);
      expectPixelRefusal(await json(await h.call("POST", "/api/v1/social/media", { key, body: { url } })));
    }
    const list = await json(await h.call("GET", "/api/v1/social/media", { key }));
    expect(list.body.media).toEqual([]);
  });

  test("conversion for Instagram (JPEG only) of a PNG that landed before the limit: 400 VALIDATION_ERROR, nothing decoded or published", async () => {
    const { key, org } = await h.seedOrg();
    const ig = await connectSocialAccount(h, key, "instagram");
    const small = await uploadSocialMedia(h, key, pixelBombPng(64, 48), "image/png");
    // The same file, its bytes swapped for the bomb's as if it had landed before the limit.
    await h.store.put(String(small.url).replace(/^\/api\/media\//, ""), BOMB, { contentType: "image/png" });
    await h.db
      .update(socialMedia)
      .set({ size: BOMB.byteLength, width: 12000, height: 12000 })
      .where(eq(socialMedia.id, small.id));
    const before = process.memoryUsage().rss;
    const r = await json(
      await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "big", media: [small.id], accounts: [ig.id] },
      }),
    );
    expectPixelRefusal(r);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    const derived = await h.db.select().from(socialMedia).where(eq(socialMedia.source, "derived"));
    expect(derived.filter((d) => d.orgId === org.id)).toEqual([]);
  });

  test("conversion under the limit still works, decoded outside the API process: a 2000×1500 PNG reaches Instagram as a JPEG", async () => {
    const { key, org } = await h.seedOrg();
    const ig = await connectSocialAccount(h, key, "instagram");
    const png = await uploadSocialMedia(h, key, pixelBombPng(2000, 1500), "image/png");
    const r = await json(
      await h.call("POST", "/api/v1/social/posts", {
        key,
        body: { content: "ok", media: [png.id], accounts: [ig.id] },
      }),
    );
    expect(r.status).toBe(201);
    expect(r.body.post.targets[0].status).toBe("published");
    const [variant] = await h.db
      .select()
      .from(socialMedia)
      .where(and(eq(socialMedia.orgId, org.id), eq(socialMedia.source, "derived")));
    expect([variant?.contentType, variant?.width, variant?.height]).toEqual(["image/jpeg", 2000, 1500]);
  });
});
