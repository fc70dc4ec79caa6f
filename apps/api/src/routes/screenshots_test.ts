import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { creditLedger, organizations, screenshotProjects, screenshotRenders } from "@site/db";
import {
  type CaptureOptions,
  captureSettingsHash,
  completeRender,
  failRender,
  RENDER_TRIES,
  sweepPendingRenders,
} from "@site/domain/screenshots";
import { createBullQueue } from "@site/queue";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
const uniq = () => Math.random().toString(36).slice(2, 9);
type Seeded = Awaited<ReturnType<TestApp["seedOrg"]>>;

beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

async function orgWithSite(app: TestApp, credits: number): Promise<Seeded & { siteId: string }> {
  const o = await app.seedOrg({ credits });
  const res = await app.call("POST", "/api/v1/sites", {
    key: o.key,
    body: { name: "Shop", slug: `shop-${uniq()}` },
  });
  const body = (await res.json()) as { site: { id: string } };
  return { ...o, siteId: body.site.id };
}

async function creditsOf(app: TestApp, orgId: string): Promise<number> {
  const [row] = await app.db
    .select({ c: organizations.credits })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  return row.c;
}

async function rendersOf(app: TestApp, siteId: string) {
  return app.db.select().from(screenshotRenders).where(eq(screenshotRenders.siteId, siteId));
}

const shot = (o: { key: string; siteId: string }, body: unknown, app: TestApp = h) =>
  app.call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, { key: o.key, body });

describe("authorization", () => {
  test("every screenshot route answers 401 without a key and 403 without content:write", async () => {
    const o = await orgWithSite(h, 100);
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${o.siteId}/media/screenshot`,
      scope: "content:write",
      body: { url: "https://example.com/" },
    });
    await expectAuthRules(h, {
      method: "GET",
      path: `/api/v1/sites/${o.siteId}/media/screenshot/${crypto.randomUUID()}`,
      scope: "content:write",
    });
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${o.siteId}/media/screenshot-login`,
      scope: "content:write",
      body: { url: "https://example.com/" },
    });
  });

  test("another organization's site answers 404 and charges nothing", async () => {
    const o = await orgWithSite(h, 100);
    const other = await h.seedOrg({ credits: 100 });
    const res = await shot({ key: other.key, siteId: o.siteId }, { url: "https://example.com/" });
    expect(res.status).toBe(404);
    expect(await creditsOf(h, other.org.id)).toBe(100);
  });
});

describe("validation", () => {
  const bad: [string, Record<string, unknown>][] = [
    ["url", {}],
    ["url", { url: "not a url" }],
    ["url", { url: "ftp://example.com/" }],
    ["url", { url: "http://127.0.0.1/admin" }],
    ["url", { url: "http://10.1.2.3/" }],
    ["url", { url: "http://localhost:3000/" }],
    ["url", { url: "https://user:pw@example.com/" }],
    ["estimateOnly", { url: "https://example.com/", estimateOnly: "yes" }],
    ["theme", { url: "https://example.com/", theme: "sepia" }],
    ["framing", { url: "https://example.com/", framing: 0.39 }],
    ["framing", { url: "https://example.com/", framing: 3.01 }],
    ["chrome", { url: "https://example.com/", chrome: "blue" }],
    ["viewportWidth", { url: "https://example.com/", viewportWidth: 319 }],
    ["viewportWidth", { url: "https://example.com/", viewportWidth: 3841 }],
    ["viewportWidth", { url: "https://example.com/", viewportWidth: 1024.5 }],
    ["viewportHeight", { url: "https://example.com/", viewportHeight: 100 }],
    ["viewportHeight", { url: "https://example.com/", viewportHeight: 4000 }],
    ["deviceScaleFactor", { url: "https://example.com/", deviceScaleFactor: 0.5 }],
    ["deviceScaleFactor", { url: "https://example.com/", deviceScaleFactor: 3.5 }],
    ["fullPage", { url: "https://example.com/", fullPage: "true" }],
    ["recapture", { url: "https://example.com/", recapture: 1 }],
    ["delayMs", { url: "https://example.com/", delayMs: 10001 }],
    ["delayMs", { url: "https://example.com/", delayMs: -1 }],
    ["delayMs", { url: "https://example.com/", delayMs: 1.5 }],
    ["hideSelectors", { url: "https://example.com/", hideSelectors: ".a" }],
    ["hideSelectors", { url: "https://example.com/", hideSelectors: Array(21).fill(".a") }],
    ["hideSelectors", { url: "https://example.com/", hideSelectors: [".a{color:red}"] }],
    ["hideSelectors", { url: "https://example.com/", hideSelectors: [""] }],
    ["waitForSelector", { url: "https://example.com/", waitForSelector: "x".repeat(201) }],
    ["waitForSelector", { url: "https://example.com/", waitForSelector: "a;b" }],
    ["blockAds", { url: "https://example.com/", blockAds: "yes" }],
    ["hideCookieBanners", { url: "https://example.com/", hideCookieBanners: 0 }],
  ];
  test("each field out of its range answers 400 VALIDATION_ERROR naming the field, with no charge", async () => {
    const o = await orgWithSite(h, 100);
    for (const [field, body] of bad) {
      const res = await shot(o, body);
      const json = (await res.json()) as {
        error: { code: string; message: string; details: { field: string }[] };
      };
      expect({ field, status: res.status, code: json.error.code }).toEqual({
        field,
        status: 400,
        code: "VALIDATION_ERROR",
      });
      // the field itself, or one of its items (hideSelectors.0)
      expect(json.error.details.map((d) => d.field.split(".")[0])).toContain(field);
    }
    expect(await creditsOf(h, o.org.id)).toBe(100);
    expect(await rendersOf(h, o.siteId)).toHaveLength(0);
  });

  test("the edges of every range are accepted", async () => {
    const o = await orgWithSite(h, 100);
    for (const body of [
      { viewportWidth: 320, viewportHeight: 3840, deviceScaleFactor: 1, framing: 0.4 },
      {
        viewportWidth: 3840,
        viewportHeight: 320,
        deviceScaleFactor: 3,
        framing: 3,
        chrome: "dark",
        theme: "dark",
      },
    ]) {
      const res = await shot(o, { url: "https://example.com/", estimateOnly: true, ...body });
      expect(res.status).toBe(200);
    }
  });

  test("an unknown styleId answers 404 NOT_FOUND and never falls back to the default look", async () => {
    const o = await orgWithSite(h, 100);
    const res = await shot(o, { url: "https://example.com/", styleId: "no-such-style" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    expect(await creditsOf(h, o.org.id)).toBe(100);
  });
});

describe("pricing and charging", () => {
  test("estimateOnly answers 200 {estimate:true, credits:10} and charges nothing", async () => {
    const o = await orgWithSite(h, 100);
    const res = await shot(o, { url: "https://example.com/", estimateOnly: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ estimate: true, credits: 10 });
    expect(await creditsOf(h, o.org.id)).toBe(100);
    expect(await rendersOf(h, o.siteId)).toHaveLength(0);
  });

  test("a queued render answers 202, debits 10 credits with a ledger entry and is pending", async () => {
    const o = await orgWithSite(h, 50);
    const res = await shot(o, { url: "https://Example.com/pricing#plans", styleId: "browser-float" });
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      estimate: false,
      renderId: expect.any(String),
      status: "pending",
      sourceUrl: "https://example.com/pricing",
      credits: 10,
    });
    expect(await creditsOf(h, o.org.id)).toBe(40);
    const ledger = await h.db.select().from(creditLedger).where(eq(creditLedger.orgId, o.org.id));
    expect(ledger.filter((l) => l.reason === "screenshot_debit").map((l) => [l.delta, l.subjectId])).toEqual([
      [-10, body.renderId as string],
    ]);
    expect(await h.queue.state("render-screenshot", body.renderId as string)).toBe("waiting");
    const poll = await h.call("GET", `/api/v1/sites/${o.siteId}/media/screenshot/${body.renderId}`, {
      key: o.key,
    });
    expect(poll.status).toBe(200);
    expect(await poll.json()).toEqual({
      renderId: body.renderId,
      status: "pending",
      sourceUrl: "https://example.com/pricing",
      imageUrl: null,
      credits: 10,
      error: null,
    });
  });

  test("short of credits answers 402 QUOTA_EXCEEDED, writes no render and keeps the balance", async () => {
    const o = await orgWithSite(h, 9);
    const res = await shot(o, { url: "https://example.com/" });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("QUOTA_EXCEEDED");
    expect(await creditsOf(h, o.org.id)).toBe(9);
    expect(await rendersOf(h, o.siteId)).toHaveLength(0);
  });

  test("30 concurrent requests with 50 credits give exactly 5 renders and a zero balance", async () => {
    const o = await orgWithSite(h, 50);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        shot(o, { url: `https://example.com/p${i}` }).then((r) => r.status),
      ),
    );
    expect(answers.filter((s) => s === 202)).toHaveLength(5);
    expect(answers.filter((s) => s === 402)).toHaveLength(25);
    expect(await creditsOf(h, o.org.id)).toBe(0);
    expect(await rendersOf(h, o.siteId)).toHaveLength(5);
    const debits = await h.db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.orgId, o.org.id), eq(creditLedger.reason, "screenshot_debit")));
    expect(debits).toHaveLength(5);
  });

  test("no browser configured answers 501 NOT_CONFIGURED before any charge", async () => {
    const app = await buildTestApp({ env: { CHROMIUM_PATH: "/nonexistent/chromium" } });
    try {
      const o = await orgWithSite(app, 100);
      const res = await shot(o, { url: "https://example.com/" }, app);
      expect(res.status).toBe(501);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_CONFIGURED");
      expect(await creditsOf(app, o.org.id)).toBe(100);
      expect(await rendersOf(app, o.siteId)).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  test("a queue that cannot take the job (Redis down) answers 503 SERVICE_UNAVAILABLE with Retry-After and refunds", async () => {
    // A real BullMQ producer pointed at a port where no Redis listens.
    const queue = createBullQueue({ redisUrl: "redis://127.0.0.1:1", log: createLogger("silent" as never) });
    const app = await buildTestApp({ queue });
    try {
      const o = await orgWithSite(app, 30);
      const res = await shot(o, { url: "https://example.com/" }, app);
      expect(res.status).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      const body = (await res.json()) as { error: { code: string; message: string; details: unknown } };
      expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
      expect(body.error.details).toEqual({ dependency: "queue" });
      expect(body.error.message).toMatch(/no credits were charged/);
      expect(await creditsOf(app, o.org.id)).toBe(30);
      const [render] = await rendersOf(app, o.siteId);
      expect(render.status).toBe("failed");
    } finally {
      await app.close();
    }
  }, 15_000);
});

describe("renders and projects", () => {
  test("an unknown render, or one of another site, answers 404", async () => {
    const a = await orgWithSite(h, 100);
    const b = await orgWithSite(h, 100);
    const res = await shot(a, { url: "https://example.com/" });
    const { renderId } = (await res.json()) as { renderId: string };
    for (const [o, id] of [
      [a, crypto.randomUUID()],
      [a, "not-a-uuid"],
      [b, renderId],
    ] as const) {
      const r = await h.call("GET", `/api/v1/sites/${o.siteId}/media/screenshot/${id}`, { key: o.key });
      expect(r.status).toBe(404);
    }
  });

  test("the project keeps capture settings; a request that names one updates it", async () => {
    const o = await orgWithSite(h, 100);
    const url = "https://example.com/app";
    await shot(o, { url });
    await shot(o, { url, viewportWidth: 800, fullPage: true });
    await shot(o, { url, deviceScaleFactor: 2 });
    const projects = await h.db
      .select()
      .from(screenshotProjects)
      .where(eq(screenshotProjects.siteId, o.siteId));
    expect(projects).toHaveLength(1);
    expect(projects[0]).toMatchObject({
      viewportWidth: 800,
      viewportHeight: 900,
      deviceScaleFactor: 2,
      fullPage: true,
    });
    const renders = await rendersOf(h, o.siteId);
    const captures = renders
      .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime())
      .map((r) => (r.options as { capture: unknown }).capture);
    const extras = {
      hideSelectors: [],
      waitForSelector: null,
      delayMs: 0,
      blockAds: false,
      hideCookieBanners: true,
    };
    expect(captures).toEqual([
      { viewportWidth: 1440, viewportHeight: 900, deviceScaleFactor: 1, fullPage: false, ...extras },
      { viewportWidth: 800, viewportHeight: 900, deviceScaleFactor: 1, fullPage: true, ...extras },
      { viewportWidth: 800, viewportHeight: 900, deviceScaleFactor: 2, fullPage: true, ...extras },
    ]);
  });

  test("capture options are capture settings: kept on the project, snapshotted per render, and a change films again", async () => {
    const o = await orgWithSite(h, 100);
    const url = "https://example.com/options";
    await shot(o, { url, hideSelectors: [" .promo ", "#ad"], delayMs: 500, blockAds: true });
    await shot(o, { url, hideCookieBanners: false, waitForSelector: "main h1" });
    await shot(o, { url });
    const [project] = await h.db
      .select()
      .from(screenshotProjects)
      .where(eq(screenshotProjects.siteId, o.siteId));
    expect(project.captureOptions).toEqual({
      hideSelectors: [".promo", "#ad"],
      delayMs: 500,
      blockAds: true,
      hideCookieBanners: false,
      waitForSelector: "main h1",
    });
    const renders = (await rendersOf(h, o.siteId)).sort(
      (x, y) => x.createdAt.getTime() - y.createdAt.getTime(),
    );
    const captures = renders.map((r) => (r.options as { capture: CaptureOptions }).capture);
    expect(captures[0]).toMatchObject({
      hideSelectors: [".promo", "#ad"],
      hideCookieBanners: true,
      waitForSelector: null,
    });
    expect(captures[2]).toMatchObject({ hideCookieBanners: false, waitForSelector: "main h1", delayMs: 500 });
    // each option is in the settings hash, so a stored capture filmed with other options is filmed again
    const hashes = new Set(captures.map((c) => captureSettingsHash(url, c)));
    expect(hashes.size).toBe(2);
    for (const change of [
      { hideSelectors: [".other"] },
      { waitForSelector: "#x" },
      { delayMs: 1 },
      { blockAds: false },
      { hideCookieBanners: true },
    ])
      expect(captureSettingsHash(url, { ...captures[2], ...change })).not.toBe(
        captureSettingsHash(url, captures[2]),
      );
  });

  test("a done render's poll answer carries displayUrl (a member grant) beside imageUrl", async () => {
    const o = await orgWithSite(h, 20);
    const { renderId } = (await (await shot(o, { url: "https://example.com/" })).json()) as {
      renderId: string;
    };
    const imageKey = `site-media/${o.siteId}/frame.webp`;
    expect(await completeRender(h.ctx, renderId, { imageKey, width: 1440, height: 900, warnings: [] })).toBe(
      true,
    );
    const poll = await h.call("GET", `/api/v1/sites/${o.siteId}/media/screenshot/${renderId}`, {
      key: o.key,
    });
    const body = (await poll.json()) as Record<string, string>;
    expect(body).toMatchObject({ status: "done", imageUrl: `/api/media/${imageKey}`, width: 1440 });
    expect(body.displayUrl).toStartWith(`/api/media/${imageKey}?k=`);
  });

  test("a failed render is refunded exactly once, however often and concurrently it is failed", async () => {
    const o = await orgWithSite(h, 20);
    const { renderId } = (await (await shot(o, { url: "https://example.com/" })).json()) as {
      renderId: string;
    };
    expect(await creditsOf(h, o.org.id)).toBe(10);
    const results = await Promise.all([1, 2, 3, 4].map(() => failRender(h.ctx, renderId, "film failed")));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await failRender(h.ctx, renderId, "again")).toBe(false);
    expect(await creditsOf(h, o.org.id)).toBe(20);
    const poll = await h.call("GET", `/api/v1/sites/${o.siteId}/media/screenshot/${renderId}`, {
      key: o.key,
    });
    expect(await poll.json()).toMatchObject({ status: "failed", error: "film failed", imageUrl: null });
  });

  test("the sweeper re-enqueues a pending render whose job vanished, and fails (refunds) one tried too often", async () => {
    const o = await orgWithSite(h, 100);
    const first = (await (await shot(o, { url: "https://example.com/a" })).json()) as { renderId: string };
    const second = (await (await shot(o, { url: "https://example.com/b" })).json()) as { renderId: string };
    await h.queue.remove("render-screenshot", first.renderId);
    expect(await h.queue.state("render-screenshot", first.renderId)).toBe("missing");
    await h.db
      .update(screenshotRenders)
      .set({ attempts: RENDER_TRIES })
      .where(eq(screenshotRenders.id, second.renderId));
    await h.queue.remove("render-screenshot", second.renderId);
    const swept = await sweepPendingRenders(h.ctx, { staleMs: -1000 });
    expect(swept).toEqual({ requeued: 1, failed: 1, admitted: 0 });
    expect(await h.queue.state("render-screenshot", first.renderId)).toBe("waiting");
    const [second_] = await h.db
      .select()
      .from(screenshotRenders)
      .where(eq(screenshotRenders.id, second.renderId));
    expect(second_.status).toBe("failed");
    expect(await creditsOf(h, o.org.id)).toBe(90);
  });
});

describe("fairness between organizations (admission, 0470)", () => {
  const admittedOf = async (orgId: string) =>
    (
      await h.db
        .select({ id: screenshotRenders.id })
        .from(screenshotRenders)
        .where(
          and(
            eq(screenshotRenders.orgId, orgId),
            eq(screenshotRenders.status, "pending"),
            isNotNull(screenshotRenders.dispatchedAt),
          ),
        )
    ).map((r) => r.id);
  const byAge = async (orgId: string) =>
    h.db
      .select()
      .from(screenshotRenders)
      .where(eq(screenshotRenders.orgId, orgId))
      .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id));

  test("an organization has at most RENDER_ORG_CONCURRENCY renders queued; the rest wait unqueued, charged", async () => {
    expect(h.ctx.config.renderOrgConcurrency).toBe(2);
    const a = await orgWithSite(h, 200);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => shot(a, { url: `https://example.com/a${i}` })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect(await creditsOf(h, a.org.id)).toBe(120);
    const admitted = await admittedOf(a.org.id);
    expect(admitted).toHaveLength(2);
    const rows = await byAge(a.org.id);
    const states = await Promise.all(rows.map((r) => h.queue.state("render-screenshot", r.id)));
    expect(states.filter((s) => s === "waiting")).toHaveLength(2);
    expect(states.filter((s) => s === "missing")).toHaveLength(6);
    for (const id of admitted) expect(await h.queue.state("render-screenshot", id)).toBe("waiting");

    // Another organization is not behind them: its render is queued at once.
    const b = await orgWithSite(h, 100);
    const { renderId } = (await (await shot(b, { url: "https://example.com/b" })).json()) as {
      renderId: string;
    };
    expect(await h.queue.state("render-screenshot", renderId)).toBe("waiting");
  });

  test("a render that ends admits the oldest waiting one; concurrent ends never pass the cap", async () => {
    const a = await orgWithSite(h, 200);
    for (let i = 0; i < 7; i++) await shot(a, { url: `https://example.com/c${i}` });
    const rows = await byAge(a.org.id);
    const [first, second] = await admittedOf(a.org.id).then((ids) => ids.sort());
    expect([first, second].sort()).toEqual([rows[0].id, rows[1].id].sort());

    expect(await failRender(h.ctx, rows[0].id, "film failed")).toBe(true);
    expect((await admittedOf(a.org.id)).sort()).toEqual([rows[1].id, rows[2].id].sort());
    expect(await h.queue.state("render-screenshot", rows[2].id)).toBe("waiting");

    // Both in progress end at once (and a render is queued meanwhile): exactly two are in progress after.
    await Promise.all([
      failRender(h.ctx, rows[1].id, "film failed"),
      failRender(h.ctx, rows[2].id, "film failed"),
      shot(a, { url: "https://example.com/c-late" }),
    ]);
    const now = await admittedOf(a.org.id);
    expect(now.sort()).toEqual([rows[3].id, rows[4].id].sort());
    for (const id of now) expect(await h.queue.state("render-screenshot", id)).toBe("waiting");
  });

  test("the sweeper admits renders whose admission was lost (a crash between a render's end and the next)", async () => {
    const a = await orgWithSite(h, 100);
    for (let i = 0; i < 3; i++) await shot(a, { url: `https://example.com/s${i}` });
    const rows = await byAge(a.org.id);
    // As if the process died after failing the first two and before admitting the third.
    await h.db
      .update(screenshotRenders)
      .set({ status: "failed" })
      .where(and(eq(screenshotRenders.orgId, a.org.id), isNotNull(screenshotRenders.dispatchedAt)));
    expect(await admittedOf(a.org.id)).toEqual([]);
    const swept = await sweepPendingRenders(h.ctx);
    expect(swept.admitted).toBeGreaterThanOrEqual(1);
    expect(await admittedOf(a.org.id)).toEqual([rows[2].id]);
    expect(await h.queue.state("render-screenshot", rows[2].id)).toBe("waiting");
  });
});

describe("login links", () => {
  test("a login link answers 201 with a one-hour loginUrl, interactive with a browser, free", async () => {
    const o = await orgWithSite(h, 0);
    const before = Date.now();
    const res = await h.call("POST", `/api/v1/sites/${o.siteId}/media/screenshot-login`, {
      key: o.key,
      body: { url: "https://app.example.com/dashboard" },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as {
      loginUrl: string;
      sourceUrl: string;
      interactive: boolean;
      expiresAt: string;
    };
    expect(body.sourceUrl).toBe("https://app.example.com/dashboard");
    expect(body.interactive).toBe(true);
    expect(body.loginUrl).toStartWith(`${h.ctx.config.publicBaseUrl}/screenshot-login/`);
    const ttl = new Date(body.expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThan(61 * 60_000);
    expect(body.expiresAt).toMatch(/Z$/);
  });

  test("without a browser the link is not interactive; a bad url answers 400", async () => {
    const app = await buildTestApp({ env: { CHROMIUM_PATH: "/nonexistent/chromium" } });
    try {
      const o = await orgWithSite(app, 0);
      const path = `/api/v1/sites/${o.siteId}/media/screenshot-login`;
      const res = await app.call("POST", path, { key: o.key, body: { url: "https://example.com/" } });
      expect(res.status).toBe(201);
      expect(((await res.json()) as { interactive: boolean }).interactive).toBe(false);
      const bad = await app.call("POST", path, { key: o.key, body: { url: "file:///etc/passwd" } });
      expect(bad.status).toBe(400);
    } finally {
      await app.close();
    }
  });
});
