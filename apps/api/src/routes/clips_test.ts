import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { creditLedger, organizations, screenshotRenders } from "@site/db";
import { failRender } from "@site/domain/screenshots";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

const CLIPS = "/api/v1/social/media/clips";
const post = (key: string, body: unknown, app: TestApp = h) => app.call("POST", CLIPS, { key, body });
const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; details?: unknown } }).error;
const creditsOf = async (orgId: string) =>
  (await h.db.select({ c: organizations.credits }).from(organizations).where(eq(organizations.id, orgId)))[0]
    .c;
const clipsOf = (orgId: string) =>
  h.db
    .select()
    .from(screenshotRenders)
    .where(eq(screenshotRenders.orgId, orgId))
    .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id));

describe("POST /api/v1/social/media/clips", () => {
  test("401 without a key, 403 without social:write", async () => {
    await expectAuthRules(h, {
      method: "POST",
      path: CLIPS,
      scope: "social:write",
      body: { url: "https://example.com/", motion: "scroll" },
    });
  });

  test("queues a clip: 202 {clipId, status pending, credits 30}, 30 credits debited once, a pending clip render", async () => {
    const o = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const res = await post(o.key, { url: "https://example.com/", motion: "orbit" });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { clipId: string; status: string; credits: number };
    expect(body).toEqual({ clipId: expect.any(String), status: "pending", credits: 30 });
    expect(await creditsOf(o.org.id)).toBe(70);
    const [row] = await clipsOf(o.org.id);
    expect(row).toMatchObject({
      id: body.clipId,
      kind: "clip",
      siteId: null,
      status: "pending",
      credits: 30,
    });
    // the defaults: 6 s, 30 fps, 1080×1350 portrait; a full-page capture of the default viewport
    expect(row.options).toMatchObject({
      clip: { motion: "orbit", durationS: 6, fps: 30, width: 1080, height: 1350 },
      capture: { viewportWidth: 1440, viewportHeight: 900, fullPage: true },
      look: { styleId: null, theme: "light" },
    });
    const ledger = await h.db.select().from(creditLedger).where(eq(creditLedger.subjectId, body.clipId));
    expect(ledger.map((l) => [l.reason, l.delta])).toEqual([["clip_debit", -30]]);
    // polled: pending, with what it will be
    const poll = await h.call("GET", `${CLIPS}/${body.clipId}`, { key: o.key });
    expect(poll.status).toBe(200);
    expect(await poll.json()).toEqual({
      clipId: body.clipId,
      status: "pending",
      media: null,
      posterUrl: null,
      durationS: 6,
      fps: 30,
      width: 1080,
      height: 1350,
      warnings: [],
      error: null,
    });
  });

  test("estimateOnly answers 200 {estimate: true, credits} and charges nothing", async () => {
    const o = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const res = await post(o.key, { url: "https://example.com/", motion: "scroll", estimateOnly: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ estimate: true, credits: 30 });
    expect(await creditsOf(o.org.id)).toBe(100);
    expect(await clipsOf(o.org.id)).toEqual([]);
  });

  test("400 VALIDATION_ERROR for bad input, naming the field; nothing charged", async () => {
    const o = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const bad: [Record<string, unknown>, string][] = [
      [{ motion: "scroll" }, "url"],
      [{ url: "https://example.com/" }, "motion"],
      [{ url: "https://example.com/", motion: "spin" }, "motion"],
      [{ url: "ftp://example.com/", motion: "scroll" }, "url"],
      [{ url: "http://10.0.0.1/", motion: "scroll" }, "url"],
      [{ url: "https://example.com/", motion: "scroll", durationS: 1 }, "durationS"],
      [{ url: "https://example.com/", motion: "scroll", durationS: 16 }, "durationS"],
      [{ url: "https://example.com/", motion: "scroll", durationS: 2.3 }, "durationS"],
      [{ url: "https://example.com/", motion: "scroll", fps: 25 }, "fps"],
      [{ url: "https://example.com/", motion: "scroll", width: 1081 }, "width"],
      [{ url: "https://example.com/", motion: "scroll", height: 1922 }, "height"],
      [{ url: "https://example.com/", motion: "scroll", width: 2000 }, "width"],
    ];
    for (const [body, field] of bad) {
      const res = await post(o.key, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      const err = await errorOf(res);
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(err)).toContain(field);
    }
    expect(await creditsOf(o.org.id)).toBe(100);
  });

  test("404 NOT_FOUND for an unknown style; 402 QUOTA_EXCEEDED without 30 credits; nothing charged", async () => {
    const o = await h.seedOrg({ credits: 29, scopes: ["social:write"] });
    const unknown = await post(o.key, {
      url: "https://example.com/",
      motion: "scroll",
      styleId: "no-such-style",
    });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe("NOT_FOUND");
    const short = await post(o.key, { url: "https://example.com/", motion: "scroll" });
    expect(short.status).toBe(402);
    expect((await errorOf(short)).code).toBe("QUOTA_EXCEEDED");
    expect(await creditsOf(o.org.id)).toBe(29);
    expect(await clipsOf(o.org.id)).toEqual([]);
  });

  test("501 NOT_CONFIGURED without FFmpeg (or without Chromium), before any charge", async () => {
    const envs: Record<string, string>[] = [
      { FFMPEG_PATH: "/nonexistent/ffmpeg" },
      { CHROMIUM_PATH: "/nonexistent/chromium" },
    ];
    for (const env of envs) {
      const app = await buildTestApp({ env });
      try {
        const o = await app.seedOrg({ credits: 100, scopes: ["social:write"] });
        const res = await post(o.key, { url: "https://example.com/", motion: "scroll" }, app);
        expect(res.status).toBe(501);
        expect((await errorOf(res)).code).toBe("NOT_CONFIGURED");
        const [org] = await app.db.select().from(organizations).where(eq(organizations.id, o.org.id));
        expect(org.credits).toBe(100);
      } finally {
        await app.close();
      }
    }
  });

  test("GET: 404 for an unknown id, a malformed id, another organization's clip; a failed clip shows its error, refunded once", async () => {
    const a = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const b = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
    const { clipId } = (await (
      await post(a.key, { url: "https://example.com/", motion: "scroll" })
    ).json()) as {
      clipId: string;
    };
    for (const path of [`${CLIPS}/${crypto.randomUUID()}`, `${CLIPS}/not-a-uuid`])
      expect((await h.call("GET", path, { key: a.key })).status).toBe(404);
    expect((await h.call("GET", `${CLIPS}/${clipId}`, { key: b.key })).status).toBe(404);
    expect(await failRender(h.ctx, clipId, "the page could not be reached")).toBe(true);
    expect(await failRender(h.ctx, clipId, "again")).toBe(false);
    const poll = (await (await h.call("GET", `${CLIPS}/${clipId}`, { key: a.key })).json()) as Record<
      string,
      unknown
    >;
    expect(poll).toMatchObject({ status: "failed", error: "the page could not be reached", media: null });
    expect(await creditsOf(a.org.id)).toBe(100);
    const ledger = await h.db.select().from(creditLedger).where(eq(creditLedger.subjectId, clipId));
    expect(ledger.map((l) => [l.reason, l.delta]).sort()).toEqual([
      ["clip_debit", -30],
      ["clip_refund", 30],
    ]);
  });
});

describe("admission: clips share the render farm's per-organization cap (0470)", () => {
  test("an organization that queues 20 clips has 2 admitted; another organization's still is queued at once", async () => {
    expect(h.ctx.config.renderOrgConcurrency).toBe(2);
    const a = await h.seedOrg({ credits: 1000, scopes: ["social:write"] });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(a.key, { url: `https://example.com/p${i}`, motion: "scroll" }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(202));
    const rows = await clipsOf(a.org.id);
    const admitted = rows.filter((r) => r.dispatchedAt !== null);
    expect(admitted).toHaveLength(2);
    const states = await Promise.all(rows.map((r) => h.queue.state("render-screenshot", r.id)));
    expect(states.filter((s) => s === "waiting")).toHaveLength(2);

    // Another organization's still: admitted and queued at once, not behind the 18 waiting clips.
    const b = await h.seedOrg({ credits: 100 });
    const site = await h.call("POST", "/api/v1/sites", {
      key: b.key,
      body: { name: "B", slug: `b-${crypto.randomUUID().slice(0, 8)}` },
    });
    const siteId = ((await site.json()) as { site: { id: string } }).site.id;
    const shot = await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot`, {
      key: b.key,
      body: { url: "https://example.com/b" },
    });
    expect(shot.status).toBe(202);
    const { renderId } = (await shot.json()) as { renderId: string };
    expect(await h.queue.state("render-screenshot", renderId)).toBe("waiting");
    const [still] = await h.db
      .select()
      .from(screenshotRenders)
      .where(and(eq(screenshotRenders.id, renderId), isNotNull(screenshotRenders.dispatchedAt)));
    expect(still).toBeDefined();

    // One of A's clips ending admits A's next clip, oldest first: never more than 2 in progress.
    // The 20 POSTs ran at once, so which two got in first is a race; the next admitted is the oldest
    // of those still waiting.
    const oldestWaiting = rows.find((r) => r.dispatchedAt === null)!;
    expect(await failRender(h.ctx, admitted[0].id, "failed")).toBe(true);
    const now = (await clipsOf(a.org.id)).filter((r) => r.status === "pending" && r.dispatchedAt !== null);
    expect(now).toHaveLength(2);
    expect(now.map((r) => r.id)).toContain(oldestWaiting.id);
  });
});

describe("OpenAPI", () => {
  test("documents POST …/clips (its body, 202, 402, 501) and GET …/clips/{clipId}", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    const create = doc.paths["/api/v1/social/media/clips"]?.post;
    expect(create).toBeDefined();
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(["200", "202", "400", "402", "404", "501"]),
    );
    expect(JSON.stringify(create.requestBody)).toContain("scroll-tilt");
    expect(doc.paths["/api/v1/social/media/clips/{clipId}"]?.get).toBeDefined();
  });
});
