import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mediaFiles, usageEvents } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { type ObjectStore, openS3Store } from "@site/storage";
import { startTestS3 } from "@site/storage/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

// One local HTTPS fixture server (self-signed CA) for every import below; only loopback is reached.
let tls: TlsFixture;
let fixture: ReturnType<typeof Bun.serve>;
// A second HTTPS server whose certificate comes from a CA the app does not trust.
let untrusted: ReturnType<typeof Bun.serve>;
const stalled: (() => void)[] = [];
beforeAll(() => {
  tls = createTlsFixture();
  const stranger = createTlsFixture();
  untrusted = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: stranger.cert, key: stranger.key },
    fetch: () => new Response(sampleImage("png")),
  });
  fixture = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch(req) {
      const url = new URL(req.url);
      const typeLies = { "content-type": "text/plain" };
      switch (url.pathname) {
        case "/photo.png":
          return new Response(sampleImage("png", { width: 64, height: 48, size: 4000 }), {
            headers: typeLies,
          });
        case "/photo.webp":
          return new Response(sampleImage("webp", { width: 10, height: 20, size: 900 }));
        case "/logo.svg":
          return new Response(sampleImage("svg"), { headers: { "content-type": "image/png" } });
        case "/page.html":
          return new Response(sampleImage("html"), { headers: { "content-type": "image/jpeg" } });
        case "/huge.png":
          return new Response(
            new ReadableStream({
              pull(c) {
                c.enqueue(sampleImage("png", { size: 8192 }));
              },
            }),
          );
        case "/slow.png":
          await new Promise<void>((r) => stalled.push(r));
          return new Response(sampleImage("png"));
        case "/to-private":
          return Response.redirect("https://10.0.0.5/x.png", 302);
      }
      return new Response("no", { status: 404 });
    },
  });
});
afterAll(() => {
  for (const r of stalled) r();
  fixture.stop(true);
  untrusted.stop(true);
});

const drivers = [
  { name: "fs", open: async () => ({ store: undefined as ObjectStore | undefined, stop: async () => {} }) },
  {
    name: "s3",
    open: async () => {
      const s3 = await startTestS3();
      const store = openS3Store(s3.options);
      return {
        store: store as ObjectStore | undefined,
        stop: async () => {
          await store.close();
          await s3.stop();
        },
      };
    },
  },
];

describe.each(drivers)("POST …/media/import-url on the $name driver", (driver) => {
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  let stop: () => Promise<void>;
  let origin: string;

  beforeAll(async () => {
    const d = await driver.open();
    stop = d.stop;
    origin = `https://localhost:${fixture.port}`;
    h = await buildTestApp({
      store: d.store,
      fetchTls: { ca: tls.ca },
      env: {
        FETCH_ALLOW_HOSTS: `localhost:${fixture.port},localhost:${untrusted.port}`,
        IMPORT_TIMEOUT_MS: "400",
        IMPORT_MAX_BYTES: "20000",
        MEDIA_DAILY_FETCH_ATTEMPT_LIMIT: "3",
        MEDIA_DAILY_UPLOAD_LIMIT: "2",
      },
    });
    owner = await h.seedOrg({ siteLimit: 100 });
  });
  afterAll(async () => {
    await h.close();
    await stop();
  });

  const newSite = async () => {
    const res = await h.call("POST", "/api/v1/sites", {
      key: owner.key,
      body: { name: "S", slug: `i-${uniq()}` },
    });
    return ((await res.json()) as Json).site.id as string;
  };
  const importUrl = async (siteId: string, body: unknown) => {
    const res = await h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, { key: owner.key, body });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const failures = async (siteId: string) =>
    (await h.db.select().from(usageEvents).where(eq(usageEvents.siteId, siteId))).filter(
      (e) => e.kind === "fetch_failure",
    ).length;
  const files = (siteId: string) => h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId));

  test("keeps the auth rules", async () => {
    const siteId = await newSite();
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${siteId}/media/import-url`,
      scope: "content:write",
      body: { url: `${origin}/photo.png`, alt: "a" },
    });
  });

  test("imports an image: 201 with publicUrl, path and name; the magic bytes decide the type; alt is stored", async () => {
    const siteId = await newSite();
    const { status, body } = await importUrl(siteId, { url: `${origin}/photo.png`, alt: "A photo" });
    expect(status).toBe(201);
    expect(body.path).toMatch(new RegExp(`^site-media/${siteId}/photo-[a-z0-9]+\\.png$`));
    expect(body.publicUrl).toBe(`/api/media/${body.path}`);
    expect(body.path.endsWith(body.name)).toBe(true);
    const [row] = await files(siteId);
    expect(row).toMatchObject({
      contentType: "image/png",
      width: 64,
      height: 48,
      alt: "A photo",
      source: "import",
      size: 4000,
    });
    expect((await h.store.head(body.path))?.contentType).toBe("image/png");
    const list = (await (
      await h.call("GET", `/api/v1/sites/${siteId}/media`, { key: owner.key })
    ).json()) as Json;
    expect(list.images.map((i: Json) => i.url)).toEqual([body.publicUrl]);
  });

  test("SVG and HTML bodies are refused whatever their header says (400 VALIDATION_ERROR), nothing stored", async () => {
    const siteId = await newSite();
    for (const path of ["/logo.svg", "/page.html"]) {
      const r = await importUrl(siteId, { url: `${origin}${path}`, alt: "" });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
    expect(await files(siteId)).toEqual([]);
  });

  test("private and disallowed targets answer 400 BLOCKED_HOST, redirects included", async () => {
    for (const url of [
      "https://127.0.0.1/x.png",
      "https://2130706433/x.png",
      "https://[::ffff:169.254.169.254]/x.png",
      "https://localhost/x.png",
      `${origin}/to-private`,
    ]) {
      const r = await importUrl(await newSite(), { url, alt: "" });
      expect({ url, status: r.status, code: r.body.error.code }).toEqual({
        url,
        status: 400,
        code: "BLOCKED_HOST",
      });
    }
  });

  test("missing, non-https or malformed URLs answer 400 VALIDATION_ERROR", async () => {
    for (const body of [{ alt: "x" }, { url: "" }, { url: "http://example.com/a.png" }, { url: "nope" }]) {
      const r = await importUrl(await newSite(), body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("a body over IMPORT_MAX_BYTES is aborted while streaming: 400, nothing stored", async () => {
    const siteId = await newSite();
    const r = await importUrl(siteId, { url: `${origin}/huge.png`, alt: "" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(await files(siteId)).toEqual([]);
    const keys: string[] = [];
    for await (const o of h.store.list(`site-media/${siteId}/`)) keys.push(o.key);
    expect(keys).toEqual([]);
  });

  test("a TLS failure says it in words, never the TLS library's text, with its reason in details", async () => {
    const siteId = await newSite();
    const r = await importUrl(siteId, { url: `https://localhost:${untrusted.port}/a.png`, alt: "" });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.message).toBe(
      "url: could not fetch the image: the server's certificate is not trusted (it is not signed by an authority this server trusts)",
    );
    expect(r.body.error.details[0]).toMatchObject({ field: "url", reason: "tls" });
    expect(JSON.stringify(r.body)).not.toMatch(/unable to verify|UNABLE_TO|ERR_|SSL|certificate chain/);
  });

  test("a host slower than IMPORT_TIMEOUT_MS answers 504 TIMEOUT", async () => {
    const siteId = await newSite();
    const r = await importUrl(siteId, { url: `${origin}/slow.png`, alt: "" });
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe("TIMEOUT");
    expect(r.body.error.message).toBe(
      "url: the remote host did not answer within 400 ms (while waiting for its answer)",
    );
  });

  test("failed fetches count toward the daily attempt limit, then 429 RATE_LIMITED", async () => {
    const siteId = await newSite();
    for (const path of ["/logo.svg", "/missing.png", "/page.html"])
      expect((await importUrl(siteId, { url: `${origin}${path}` })).status).toBe(400);
    expect(await failures(siteId)).toBe(3);
    const r = await importUrl(siteId, { url: `${origin}/photo.png` });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("RATE_LIMITED");
  });

  test("successful imports count toward the daily upload cap, not the attempt limit", async () => {
    const siteId = await newSite();
    expect((await importUrl(siteId, { url: `${origin}/photo.webp` })).status).toBe(201);
    expect((await importUrl(siteId, { url: `${origin}/photo.png` })).status).toBe(201);
    expect(await failures(siteId)).toBe(0);
    const r = await importUrl(siteId, { url: `${origin}/photo.png` });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("RATE_LIMITED");
  });
});
