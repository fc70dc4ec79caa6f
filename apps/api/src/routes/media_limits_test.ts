import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { usageEvents } from "@site/db";
import { AppError } from "@site/domain/core";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { renderError } from "../errors.ts";

type Json = any;
const DAY_S = 24 * 3600;

// One local HTTPS fixture (self-signed CA): an image, and a 404 (a failed fetch).
let tls: TlsFixture;
let fixture: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  tls = createTlsFixture();
  fixture = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    fetch: (req) =>
      new URL(req.url).pathname === "/a.png"
        ? new Response(sampleImage("png", { width: 8, height: 8, size: 2000 }))
        : new Response("no", { status: 404 }),
  });
});
afterAll(() => {
  fixture.stop(true);
});

/** A 429 in the contract's body with a Retry-After of whole seconds in (0, max]. */
async function expect429(res: Response, max: number): Promise<number> {
  const body = (await res.json()) as Json;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status: 429, code: "RATE_LIMITED" });
  const header = res.headers.get("retry-after");
  expect(header).toMatch(/^\d+$/);
  const seconds = Number(header);
  expect(seconds).toBeGreaterThan(0);
  expect(seconds).toBeLessThanOrEqual(max);
  return seconds;
}

describe("media limits: every 429 carries Retry-After; a URL refused before connecting is no failed fetch", () => {
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  let origin: string;
  beforeAll(async () => {
    origin = `https://localhost:${fixture.port}`;
    h = await buildTestApp({
      fetchTls: { ca: tls.ca },
      env: {
        FETCH_ALLOW_HOSTS: `localhost:${fixture.port}`,
        MEDIA_DAILY_FETCH_ATTEMPT_LIMIT: "2",
        MEDIA_DAILY_UPLOAD_LIMIT: "1",
        RETRY_AFTER_SECONDS: "7",
      },
    });
    owner = await h.seedOrg({ siteLimit: 50 });
  });
  afterAll(async () => {
    await h.close();
  });
  const importUrl = (siteId: string, url: string) =>
    h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, { key: owner.key, body: { url } });
  const failedFetches = async (siteId: string) =>
    (await h.db.select().from(usageEvents).where(eq(usageEvents.siteId, siteId))).filter(
      (e) => e.kind === "fetch_failure",
    ).length;

  test("the daily upload cap: a signed upload's 429 has Retry-After (at most the upload URL's 2 h while one is pending)", async () => {
    const site = await h.newSite(owner.key);
    const prepare = () =>
      h.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
        key: owner.key,
        body: { contentType: "image/png", size: 2000 },
      });
    expect((await prepare()).status).toBe(201);
    await expect429(await prepare(), 7200);
  });

  test("the daily upload cap: an import's 429 has Retry-After, the time until the day's first upload leaves the window", async () => {
    const site = await h.newSite(owner.key);
    expect((await importUrl(site.id, `${origin}/a.png`)).status).toBe(201);
    const seconds = await expect429(await importUrl(site.id, `${origin}/a.png`), DAY_S);
    expect(seconds).toBeGreaterThan(DAY_S - 120);
  });

  test("the daily failed-fetch limit: the 429 has Retry-After, the time until the oldest failure leaves the window", async () => {
    const site = await h.newSite(owner.key);
    expect((await importUrl(site.id, `${origin}/missing.png`)).status).toBe(400);
    // The first failure was an hour ago: it frees its slot in 23 h.
    await h.db
      .update(usageEvents)
      .set({ createdAt: new Date(Date.now() - 3600_000) })
      .where(eq(usageEvents.siteId, site.id));
    expect((await importUrl(site.id, `${origin}/missing.png`)).status).toBe(400);
    const seconds = await expect429(await importUrl(site.id, `${origin}/a.png`), DAY_S);
    expect(Math.abs(seconds - (DAY_S - 3600))).toBeLessThan(120);
  });

  test("the per-key request limit: 429 with Retry-After", async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_REQUESTS: "2", RATE_LIMIT_WINDOW_MS: "60000" } });
    try {
      const o = await limited.seedOrg();
      let last: Response | null = null;
      for (let i = 0; i < 3; i++) last = await limited.call("GET", "/api/v1/sites", { key: o.key });
      await expect429(last!, 60);
    } finally {
      await limited.close();
    }
  });

  test("a 429 whose limit names no reset (the parser pool's busy refusal) gets RETRY_AFTER_SECONDS", async () => {
    const res = renderError(
      "UNKNOWN",
      new AppError("RATE_LIMITED", "content: the page parser is busy; try again shortly"),
      createLogger("silent" as never),
      "req_test",
      { retryAfterSeconds: 7 },
    );
    expect(await expect429(res, 7)).toBe(7);
  });

  test("URLs refused before any connection (not https, guarded address, literal or resolved, malformed) are no failed fetches", async () => {
    const site = await h.newSite(owner.key);
    const refused = [
      "http://example.com/a.png",
      "ftp://example.com/a.png",
      "https://127.0.0.1/a.png",
      "https://[::ffff:169.254.169.254]/a.png",
      // A name the guard resolves to loopback: refused after DNS, still before any connection.
      "https://localhost/a.png",
      "https://user:pw@example.com/a.png",
      "not a url",
    ];
    // Twice the site's whole limit of 2 failed fetches.
    for (const url of [...refused, ...refused]) {
      const res = await importUrl(site.id, url);
      const body = (await res.json()) as Json;
      expect({ url, status: res.status, code: body.error.code }).toMatchObject({ url, status: 400 });
      expect(["VALIDATION_ERROR", "BLOCKED_HOST"]).toContain(body.error.code);
    }
    expect(await failedFetches(site.id)).toBe(0);
    // The limit is untouched: a real import still lands.
    expect((await importUrl(site.id, `${origin}/a.png`)).status).toBe(201);
  });

  test("a fetch that reached a host and failed still counts, and a refusal stays 400 once the limit is spent", async () => {
    const site = await h.newSite(owner.key);
    for (let i = 0; i < 2; i++) expect((await importUrl(site.id, `${origin}/missing.png`)).status).toBe(400);
    expect(await failedFetches(site.id)).toBe(2);
    await expect429(await importUrl(site.id, `${origin}/a.png`), DAY_S);
    // A URL the guard refuses as written is answered for what it is, not as a spent limit.
    const refused = await importUrl(site.id, "http://example.com/a.png");
    expect(refused.status).toBe(400);
    expect(await failedFetches(site.id)).toBe(2);
  });
});
