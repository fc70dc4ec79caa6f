import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createLogger, loadConfig } from "@site/config";
import { type DbHandle, screenshotRenders, sites, webhookEndpoints, webhookEvents } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { AppError, createOrganization, type Principal } from "@site/domain/core";
import { creditsOf, ledgerOf } from "@site/domain/testing";
import {
  createMemoryQueue,
  JOBS,
  type JobQueue,
  PermanentJobError,
  QueueUnavailableError,
} from "@site/queue";
import { and, asc, eq, isNotNull, sql } from "drizzle-orm";
import {
  admitRenders,
  beginRenderTry,
  completeRender,
  dispatchQueued,
  enqueueAdmitted,
  failRender,
  findRender,
  getRender,
  insertPendingRender,
  queueScreenshot,
  RENDER_TRIES,
  type RenderContext,
  releaseRenderTry,
  setRenderStage,
  sweepPendingRenders,
} from "./renders.ts";

// Render admission and settlement at the domain level, on a real PostgreSQL and the real in-process
// queue, without a browser (the configured Chromium is only looked up, never started): the
// per-organization cap and its order (0470), the debit and the refund once per render, tries, the end
// of a render and the sweeper (0472). Also the focused test StrykerJS runs for renders.ts
// (docs/mutation/renders.md).

let handle: DbHandle;
const log = createLogger("silent" as never);
const queues: JobQueue[] = [];

/** A render context on the test database: its own in-process queue, the given cap and clock. */
function renderCtx(
  o: {
    queue?: JobQueue;
    cap?: number;
    chromium?: string;
    now?: () => Date;
    env?: Record<string, string>;
  } = {},
): RenderContext {
  const queue = o.queue ?? createMemoryQueue({ log });
  queues.push(queue);
  return {
    config: loadConfig({
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      // Only looked up (it exists), never started.
      CHROMIUM_PATH: o.chromium ?? process.execPath,
      RENDER_ORG_CONCURRENCY: String(o.cap ?? 2),
      RETRY_AFTER_SECONDS: "7",
      ...o.env,
    }),
    db: handle.db,
    clock: { now: o.now ?? (() => new Date()) },
    log,
    queue,
  };
}

beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => {
  for (const q of queues) await q.close();
  await handle.close();
});

type Org = { orgId: string; siteId: string; principal: Principal };

async function org(ctx: RenderContext, credits = 1000): Promise<Org> {
  const o = await createOrganization(ctx, { name: `Renders ${randomUUID().slice(0, 6)}`, credits });
  const [site] = await handle.db
    .insert(sites)
    .values({ orgId: o.id, name: "Shop", slug: `r-${randomUUID().slice(0, 12)}` })
    .returning({ id: sites.id });
  const principal: Principal = {
    keyId: randomUUID(),
    orgId: o.id,
    userId: randomUUID(),
    scopes: ["content:read", "content:write"],
    role: "owner",
  };
  return { orgId: o.id, siteId: site.id, principal };
}

const balance = (orgId: string) => creditsOf(handle.db, orgId);
const ledger = (orgId: string) => ledgerOf(handle.db, orgId);
const row = async (id: string) =>
  (await handle.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, id)))[0]!;
/** The organization's renders oldest first. */
const byAge = async (orgId: string) =>
  handle.db
    .select()
    .from(screenshotRenders)
    .where(eq(screenshotRenders.orgId, orgId))
    .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id));
/** Ids of the organization's renders in progress (pending and admitted), sorted. */
const inProgress = async (orgId: string) =>
  (
    await handle.db
      .select({ id: screenshotRenders.id })
      .from(screenshotRenders)
      .where(
        and(
          eq(screenshotRenders.orgId, orgId),
          eq(screenshotRenders.status, "pending"),
          isNotNull(screenshotRenders.dispatchedAt),
        ),
      )
  )
    .map((r) => r.id)
    .sort();
const appError = (err: unknown) =>
  err instanceof AppError
    ? { code: err.code, message: err.message, details: err.details, headers: err.headers }
    : { unexpected: String(err) };

/** Polls `what` for up to about 5 s (a wait seen, a job settled). */
const until = async (what: () => Promise<boolean>) => {
  for (let i = 0; i < 500 && !(await what()); i++) await new Promise((r) => setTimeout(r, 10));
};

/** Queues a still through queueScreenshot and answers its render id. */
async function shoot(ctx: RenderContext, o: Org, url = `https://example.com/${randomUUID().slice(0, 8)}`) {
  const answer = await queueScreenshot(ctx, o.principal, o.siteId, { url });
  if (answer.estimate) throw new Error("an estimate");
  return answer.renderId;
}

/** Writes a render straight into the table as the given organization's, pending and waiting. */
async function waiting(o: Org, n: number, kind: "still" | "clip" = "still"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const [r] = await handle.db
      .insert(screenshotRenders)
      .values({
        orgId: o.orgId,
        siteId: kind === "still" ? o.siteId : null,
        kind,
        sourceUrl: `https://example.com/w${i}`,
        options: { clip: { durationS: 4, fps: 30, width: 1080, height: 1920 } },
        credits: 10,
        status: "pending",
      })
      .returning({ id: screenshotRenders.id });
    ids.push(r.id);
  }
  return ids;
}

/** Subscribes the organization to the render events, so that ends are recorded (decision 0840). */
async function subscribe(orgId: string) {
  await handle.db.insert(webhookEndpoints).values({
    orgId,
    url: "https://hooks.example.com/in",
    events: ["screenshot.completed", "screenshot.failed", "clip.completed", "clip.failed"],
    secret: "whsec_test",
  });
}
const eventsOf = async (orgId: string) =>
  (await handle.db.select().from(webhookEvents).where(eq(webhookEvents.orgId, orgId))).map((e) => e.type);

describe("queueScreenshot", () => {
  test("an estimate is priced at 10 and charges nothing, writes nothing, needs no browser", async () => {
    const ctx = renderCtx({ chromium: "/nonexistent/chromium" });
    const o = await org(ctx, 100);
    expect(
      await queueScreenshot(ctx, o.principal, o.siteId, { url: "https://example.com/", estimateOnly: true }),
    ).toEqual({ estimate: true, credits: 10 });
    expect(await balance(o.orgId)).toBe(100);
    expect(await byAge(o.orgId)).toEqual([]);
  });

  test("an unknown style answers 404 naming the field, before any charge", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 100);
    const err = await queueScreenshot(ctx, o.principal, o.siteId, {
      url: "https://example.com/",
      styleId: "no-such-style",
    }).then(() => null, appError);
    expect(err).toMatchObject({
      code: "NOT_FOUND",
      message: 'styleId: no screenshot style "no-such-style"',
      details: [{ field: "styleId", message: "unknown style" }],
    });
    expect(await balance(o.orgId)).toBe(100);
  });

  test("without a browser: 501 NOT_CONFIGURED before any charge, even an estimate with a known style is free", async () => {
    const ctx = renderCtx({ chromium: "/nonexistent/chromium" });
    const o = await org(ctx, 100);
    const err = await queueScreenshot(ctx, o.principal, o.siteId, {
      url: "https://example.com/",
      styleId: "browser-float",
    }).then(() => null, appError);
    expect(err).toMatchObject({
      code: "NOT_CONFIGURED",
      message: "screenshot rendering is not configured on this server (no Chromium)",
    });
    expect(await balance(o.orgId)).toBe(100);
    expect(await byAge(o.orgId)).toEqual([]);
    expect(await ledger(o.orgId)).toEqual([]);
  });

  test("a queued still: 10 credits debited with its ledger row, pending with its options, admitted and enqueued by id", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 25);
    const answer = await queueScreenshot(ctx, o.principal, o.siteId, {
      url: "https://Example.com/pricing#plans",
      styleId: "browser-float",
      theme: "dark",
      recapture: true,
      viewportWidth: 800,
    });
    expect(answer).toEqual({
      estimate: false,
      renderId: expect.any(String),
      status: "pending",
      sourceUrl: "https://example.com/pricing",
      credits: 10,
    });
    const id = (answer as { renderId: string }).renderId;
    expect(await balance(o.orgId)).toBe(15);
    expect(await ledger(o.orgId)).toEqual([[-10, "screenshot_debit", id]]);
    const r = await row(id);
    expect(r).toMatchObject({
      kind: "still",
      status: "pending",
      orgId: o.orgId,
      siteId: o.siteId,
      sourceUrl: "https://example.com/pricing",
      credits: 10,
      attempts: 0,
    });
    expect(r.projectId).toEqual(expect.any(String));
    expect(r.dispatchedAt).toBeInstanceOf(Date);
    expect(r.options).toEqual({
      look: { styleId: "browser-float", theme: "dark", framing: null, chrome: null },
      capture: expect.objectContaining({ viewportWidth: 800, viewportHeight: 900, deviceScaleFactor: 1 }),
      recapture: true,
    });
    expect(Object.keys((r.options as { capture: object }).capture)).not.toContain("id");
    expect(await ctx.queue.state("render-screenshot", id)).toBe("waiting");
  });

  test("this machine's pages are refused (400), unless the development switch allows the local network", async () => {
    const url = "http://127.0.0.1:8080/dev";
    const ctx = renderCtx();
    const o = await org(ctx, 100);
    expect(await shoot(ctx, o, url).then(() => null, appError)).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await balance(o.orgId)).toBe(100);
    const dev = renderCtx({ env: { ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT: "true" } });
    const id = await shoot(dev, o, url);
    expect((await row(id)).sourceUrl).toBe(url);
    expect(await balance(o.orgId)).toBe(90);
  });

  test("short of credits: 402 and nothing written", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 9);
    const err = await shoot(ctx, o).then(() => null, appError);
    expect(err).toMatchObject({
      code: "QUOTA_EXCEEDED",
      message: "not enough AI credits: a screenshot costs 10",
    });
    expect(await balance(o.orgId)).toBe(9);
    expect(await byAge(o.orgId)).toEqual([]);
  });

  test("past the cap a render is charged and waits unadmitted, with no job", async () => {
    const ctx = renderCtx({ cap: 2 });
    const o = await org(ctx, 100);
    const ids = [await shoot(ctx, o), await shoot(ctx, o), await shoot(ctx, o)];
    expect(await balance(o.orgId)).toBe(70);
    expect(await inProgress(o.orgId)).toEqual([ids[0], ids[1]].sort());
    expect((await row(ids[2])).dispatchedAt).toBeNull();
    expect(await Promise.all(ids.map((id) => ctx.queue.state("render-screenshot", id)))).toEqual([
      "waiting",
      "waiting",
      "missing",
    ]);
  });
});

/** The in-process queue, with `enqueue` failing with `err` for the ids in `failing` (all when empty). */
function failingQueue(err: () => Error, failing: string[] = []): JobQueue {
  const inner = createMemoryQueue({ log });
  return {
    ...inner,
    async enqueue(name, data, opts) {
      if (failing.length === 0 || failing.includes(opts.jobId)) throw err();
      return inner.enqueue(name, data, opts);
    },
  };
}

describe("dispatchQueued: a failed enqueue fails the render with its refund", () => {
  test("a queue outage: 503 SERVICE_UNAVAILABLE with Retry-After and the queue named; refunded once, failed", async () => {
    const ctx = renderCtx({ queue: failingQueue(() => new QueueUnavailableError("redis down")) });
    const o = await org(ctx, 30);
    const err = await shoot(ctx, o).then(() => null, appError);
    expect(err).toEqual({
      code: "SERVICE_UNAVAILABLE",
      message: "The render queue is unavailable right now; no credits were charged. Try again shortly.",
      details: { dependency: "queue" },
      headers: { "retry-after": "7" },
    });
    const [r] = await byAge(o.orgId);
    expect(r).toMatchObject({
      status: "failed",
      error: "the render queue is unavailable; the credits were refunded",
    });
    expect(await balance(o.orgId)).toBe(30);
    expect(await ledger(o.orgId)).toEqual([
      [-10, "screenshot_debit", r.id],
      [10, "screenshot_refund", r.id],
    ]);
  });

  test("any other enqueue failure: 502 RENDERER_ERROR, refunded", async () => {
    const ctx = renderCtx({ queue: failingQueue(() => new Error("boom")) });
    const o = await org(ctx, 30);
    const err = await shoot(ctx, o).then(() => null, appError);
    expect(err).toMatchObject({
      code: "RENDERER_ERROR",
      message: "the renderer is unavailable; no credits were charged",
    });
    expect(await balance(o.orgId)).toBe(30);
    expect((await byAge(o.orgId))[0]!.status).toBe("failed");
  });

  test("a render not admitted is not enqueued; the others its admission let in are", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [a, b, c] = await waiting(o, 3);
    await dispatchQueued(ctx, a!, [b!, c!]);
    expect(await ctx.queue.state("render-screenshot", a!)).toBe("missing");
    expect(await ctx.queue.state("render-screenshot", b!)).toBe("waiting");
    expect(await ctx.queue.state("render-screenshot", c!)).toBe("waiting");
    expect((await row(a!)).status).toBe("pending");
  });

  test("enqueueAdmitted leaves a failed enqueue to the sweeper and enqueues the rest", async () => {
    const o = await org(renderCtx());
    const [a, b] = await waiting(o, 2);
    const ctx = renderCtx({ queue: failingQueue(() => new Error("boom"), [a!]) });
    await enqueueAdmitted(ctx, [a!, b!]);
    expect(await ctx.queue.state("render-screenshot", a!)).toBe("missing");
    expect(await ctx.queue.state("render-screenshot", b!)).toBe("waiting");
    expect((await row(a!)).status).toBe("pending");
  });
});

describe("admitRenders: at most the cap in progress per organization, oldest first (0470)", () => {
  const admit = (ctx: RenderContext, orgId: string) =>
    handle.db.transaction((tx) => admitRenders(ctx, tx, orgId));

  test("room for the cap: the oldest waiting renders, exactly as many as there is room", async () => {
    const ctx = renderCtx({ cap: 3 });
    const o = await org(ctx);
    const ids = await waiting(o, 5);
    expect((await admit(ctx, o.orgId)).sort()).toEqual(ids.slice(0, 3).sort());
    expect(await inProgress(o.orgId)).toEqual(ids.slice(0, 3).sort());
    // Full: nothing more.
    expect(await admit(ctx, o.orgId)).toEqual([]);
    // One ends: exactly one more, the oldest waiting.
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done" })
      .where(eq(screenshotRenders.id, ids[0]!));
    expect(await admit(ctx, o.orgId)).toEqual([ids[3]!]);
  });

  test("ties on the creation time go by id", async () => {
    const ctx = renderCtx({ cap: 1 });
    const o = await org(ctx);
    const ids = await waiting(o, 3);
    const at = new Date("2026-01-01T00:00:00Z");
    await handle.db
      .update(screenshotRenders)
      .set({ createdAt: at })
      .where(eq(screenshotRenders.orgId, o.orgId));
    expect(await admit(ctx, o.orgId)).toEqual([[...ids].sort()[0]!]);
  });

  test("more in progress than the cap (a lowered cap) admits nothing", async () => {
    const o = await org(renderCtx());
    const ids = await waiting(o, 4);
    expect(await admit(renderCtx({ cap: 3 }), o.orgId)).toHaveLength(3);
    expect(await admit(renderCtx({ cap: 1 }), o.orgId)).toEqual([]);
    expect((await row(ids[3]!)).dispatchedAt).toBeNull();
  });

  test("only the organization's own renders count and are admitted; ended ones do not count", async () => {
    const ctx = renderCtx({ cap: 2 });
    const a = await org(ctx);
    const b = await org(ctx);
    const [a1, a2, a3] = await waiting(a, 3);
    const [b1, b2, b3] = await waiting(b, 3);
    expect((await admit(ctx, a.orgId)).sort()).toEqual([a1!, a2!].sort());
    expect(await inProgress(b.orgId)).toEqual([]);
    expect((await admit(ctx, b.orgId)).sort()).toEqual([b1!, b2!].sort());
    await handle.db.update(screenshotRenders).set({ status: "failed" }).where(eq(screenshotRenders.id, a1!));
    expect(await admit(ctx, a.orgId)).toEqual([a3!]);
    expect((await row(b3!)).dispatchedAt).toBeNull();
  });

  test("admissions of one organization wait for each other (its advisory lock); another organization's do not", async () => {
    const ctx = renderCtx({ cap: 2 });
    const a = await org(ctx);
    const b = await org(ctx);
    const [a1, a2] = await waiting(a, 3);
    const [b1] = await waiting(b, 1);
    const advisoryWaiters = async () =>
      (
        await handle.db.execute<{ n: number }>(
          sql`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'`,
        )
      )[0]!.n;
    let release!: () => void;
    const hold = new Promise<void>((r) => {
      release = r;
    });
    let admittedFirst!: (ids: string[]) => void;
    const first = new Promise<string[]>((r) => {
      admittedFirst = r;
    });
    // The first admission holds its transaction open after admitting (as a render's end does until commit).
    const t1 = handle.db.transaction(async (tx) => {
      admittedFirst(await admitRenders(ctx, tx, a.orgId));
      await hold;
    });
    try {
      expect((await first).sort()).toEqual([a1!, a2!].sort());
      // Another organization is not behind that lock.
      expect(await admit(ctx, b.orgId)).toEqual([b1!]);
      // The same organization's next admission waits for it, on the advisory lock.
      const t2 = admit(ctx, a.orgId);
      await until(async () => (await advisoryWaiters()) > 0);
      expect(await advisoryWaiters()).toBe(1);
      release();
      await t1;
      // It then counts the two committed admissions: no room.
      expect(await t2).toEqual([]);
    } finally {
      release();
      await t1;
    }
    expect(await inProgress(a.orgId)).toEqual([a1!, a2!].sort());
  });

  test("a waiting render that ended is never admitted", async () => {
    const ctx = renderCtx({ cap: 2 });
    const o = await org(ctx);
    const [x, y] = await waiting(o, 2);
    await handle.db.update(screenshotRenders).set({ status: "failed" }).where(eq(screenshotRenders.id, x!));
    expect(await admit(ctx, o.orgId)).toEqual([y!]);
    expect((await row(x!)).dispatchedAt).toBeNull();
  });
});

describe("reading renders", () => {
  test("findRender: null for a malformed or unknown id, the row otherwise", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id] = await waiting(o, 1);
    expect(await findRender(ctx, "not-a-uuid")).toBeNull();
    expect(await findRender(ctx, randomUUID())).toBeNull();
    expect((await findRender(ctx, id!))?.id).toBe(id!);
  });

  test("getRender: 404 for a clip or another site's render; displayUrl only for a done render with an image", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const other = await org(ctx);
    const [still, done, doneNoImage] = await waiting(o, 3);
    const [clip] = await waiting(o, 1, "clip");
    const notFound = (siteOwner: Org, id: string) =>
      getRender(ctx, siteOwner.principal, siteOwner.siteId, id).then(() => null, appError);
    expect(await notFound(o, clip!)).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await notFound(other, still!)).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await notFound(o, randomUUID())).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await getRender(ctx, o.principal, o.siteId, still!)).toEqual({
      renderId: still!,
      status: "pending",
      sourceUrl: "https://example.com/w0",
      imageUrl: null,
      credits: 10,
      error: null,
    });
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done", imageKey: `site-media/${o.siteId}/a.webp`, width: 4, height: 3 })
      .where(eq(screenshotRenders.id, done!));
    const view = (await getRender(ctx, o.principal, o.siteId, done!)) as { displayUrl?: string };
    expect(view).toMatchObject({ status: "done", imageUrl: `/api/media/site-media/${o.siteId}/a.webp` });
    expect(view.displayUrl).toStartWith(`/api/media/site-media/${o.siteId}/a.webp?k=`);
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done", width: 4, height: 3 })
      .where(eq(screenshotRenders.id, doneNoImage!));
    expect(await getRender(ctx, o.principal, o.siteId, doneNoImage!)).not.toHaveProperty("displayUrl");
  });
});

describe("tries", () => {
  test("RENDER_TRIES is the render job's attempts in the catalog (3)", () => {
    expect(RENDER_TRIES).toBe(JOBS["render-screenshot"].attempts);
    expect(RENDER_TRIES).toBe(3);
  });

  test("beginRenderTry counts a try and sets the film stage; null once the render ended", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id] = await waiting(o, 1);
    const before = await row(id!);
    const begun = await beginRenderTry(ctx, id!);
    expect(begun).toMatchObject({ id: id!, attempts: 1, stage: "film", status: "pending" });
    expect(begun!.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
    expect((await beginRenderTry(ctx, id!))?.attempts).toBe(2);
    await handle.db.update(screenshotRenders).set({ status: "done" }).where(eq(screenshotRenders.id, id!));
    expect(await beginRenderTry(ctx, id!)).toBeNull();
    expect((await row(id!)).attempts).toBe(2);
  });

  test("setRenderStage moves a pending render's stage, and leaves an ended one alone", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id, ended] = await waiting(o, 2);
    await setRenderStage(ctx, id!, "compose");
    expect((await row(id!)).stage).toBe("compose");
    await handle.db
      .update(screenshotRenders)
      .set({ status: "failed" })
      .where(eq(screenshotRenders.id, ended!));
    await setRenderStage(ctx, ended!, "store");
    expect((await row(ended!)).stage).toBeNull();
  });

  test("releaseRenderTry hands a try back (never below zero), clears the stage, and leaves an ended render alone", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id, ended] = await waiting(o, 2);
    await beginRenderTry(ctx, id!);
    await beginRenderTry(ctx, id!);
    await releaseRenderTry(ctx, id!);
    expect(await row(id!)).toMatchObject({ attempts: 1, stage: null, status: "pending" });
    await releaseRenderTry(ctx, id!);
    await releaseRenderTry(ctx, id!);
    expect((await row(id!)).attempts).toBe(0);
    await beginRenderTry(ctx, ended!);
    await handle.db
      .update(screenshotRenders)
      .set({ status: "failed" })
      .where(eq(screenshotRenders.id, ended!));
    await releaseRenderTry(ctx, ended!);
    expect(await row(ended!)).toMatchObject({ attempts: 1, stage: "film" });
  });
});

describe("a render's end", () => {
  test("completeRender stores the output, records screenshot.completed and admits the oldest waiting render", async () => {
    const ctx = renderCtx({ cap: 1 });
    const o = await org(ctx);
    await subscribe(o.orgId);
    const [first, second, third] = [await shoot(ctx, o), await shoot(ctx, o), await shoot(ctx, o)];
    await beginRenderTry(ctx, first);
    expect(
      await completeRender(ctx, first, {
        imageKey: `site-media/${o.siteId}/f.webp`,
        width: 1440,
        height: 900,
        warnings: ["login"],
      }),
    ).toBe(true);
    const r = await row(first);
    expect(r).toMatchObject({
      status: "done",
      stage: null,
      imageKey: `site-media/${o.siteId}/f.webp`,
      posterKey: null,
      mediaId: null,
      width: 1440,
      height: 900,
      warnings: ["login"],
      error: null,
    });
    expect(r.finishedAt).toBeInstanceOf(Date);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.completed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await ctx.queue.state("render-screenshot", second)).toBe("waiting");
    expect(await ctx.queue.state("render-screenshot", third)).toBe("missing");
    // Once ended, it is not ended again: no second event, nothing admitted.
    expect(await completeRender(ctx, first, { imageKey: "x", width: 1, height: 1, warnings: [] })).toBe(
      false,
    );
    expect(await failRender(ctx, first, "late")).toBe(false);
    expect((await row(first)).imageKey).toBe(`site-media/${o.siteId}/f.webp`);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.completed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await balance(o.orgId)).toBe(970);
  });

  test("completeRender keeps a clip's poster and media entry; a failed render's error is cleared", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [clip] = await waiting(o, 1, "clip");
    await handle.db
      .update(screenshotRenders)
      .set({ error: "a try failed", stage: "store" })
      .where(eq(screenshotRenders.id, clip!));
    expect(
      await completeRender(ctx, clip!, {
        imageKey: "social/clip.mp4",
        posterKey: "social/clip.jpg",
        width: 1080,
        height: 1920,
        warnings: [],
      }),
    ).toBe(true);
    expect(await row(clip!)).toMatchObject({
      status: "done",
      stage: null,
      error: null,
      imageKey: "social/clip.mp4",
      posterKey: "social/clip.jpg",
    });
  });

  test("failRender: failed with its error (500 characters at most), refunded once, screenshot.failed, the next admitted", async () => {
    const ctx = renderCtx({ cap: 1 });
    const o = await org(ctx, 100);
    await subscribe(o.orgId);
    const [first, second] = [await shoot(ctx, o), await shoot(ctx, o)];
    await setRenderStage(ctx, first, "compose");
    const long = `${"e".repeat(499)}XYZ`;
    expect(await failRender(ctx, first, long)).toBe(true);
    const r = await row(first);
    expect(r).toMatchObject({ status: "failed", stage: null, error: `${"e".repeat(499)}X` });
    expect(r.finishedAt).toBeInstanceOf(Date);
    expect(await balance(o.orgId)).toBe(90);
    expect(await ledger(o.orgId)).toEqual([
      [-10, "screenshot_debit", first],
      [-10, "screenshot_debit", second],
      [10, "screenshot_refund", first],
    ]);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.failed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await ctx.queue.state("render-screenshot", second)).toBe("waiting");
  });

  test("a failed clip is refunded as a clip, its amount, and records clip.failed", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 100);
    await subscribe(o.orgId);
    const { id } = await handle.db.transaction((tx) =>
      insertPendingRender(
        ctx,
        tx,
        {
          orgId: o.orgId,
          siteId: null,
          kind: "clip",
          sourceUrl: "https://example.com/clip",
          options: { clip: { durationS: 4, fps: 30, width: 1080, height: 1920 } },
          credits: 25,
        },
        "clip_debit",
      ),
    );
    expect(await failRender(ctx, id, "ffmpeg failed")).toBe(true);
    expect(await ledger(o.orgId)).toEqual([
      [-25, "clip_debit", id],
      [25, "clip_refund", id],
    ]);
    expect(await eventsOf(o.orgId)).toEqual(["clip.failed"]);
  });
});

/** The in-process queue with a consumer whose handler does what `job` says for each render id. */
function consumed(ctx: RenderContext, job: (renderId: string) => Promise<void>) {
  return ctx.queue.consume("render-screenshot", (j) => job((j.data as { renderId: string }).renderId), {
    concurrency: 10,
  });
}

describe("sweepPendingRenders (0472)", () => {
  // The sweeper reads every organization's renders: each test starts with none pending in the database.
  beforeEach(async () => {
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done" })
      .where(eq(screenshotRenders.status, "pending"));
  });

  test("a render admitted less than a second ago is left to its enqueue; after that its vanished job is enqueued again", async () => {
    let later = 0;
    const ctx = renderCtx({ now: () => new Date(Date.now() + later) });
    const o = await org(ctx);
    const id = await shoot(ctx, o);
    await ctx.queue.remove("render-screenshot", id);
    expect(await sweepPendingRenders(ctx)).toEqual({ requeued: 0, failed: 0, admitted: 0 });
    expect(await ctx.queue.state("render-screenshot", id)).toBe("missing");
    later = 1500;
    expect(await sweepPendingRenders(ctx)).toEqual({ requeued: 1, failed: 0, admitted: 0 });
    expect(await ctx.queue.state("render-screenshot", id)).toBe("waiting");
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 0 });
  });

  test("jobs waiting, running or delayed are left alone; a job that failed for good fails the render with its refund", async () => {
    const ctx = renderCtx({ cap: 10 });
    const o = await org(ctx, 100);
    const [vanishedId, activeId, delayedId, failedId, completedId] = [
      await shoot(ctx, o),
      await shoot(ctx, o),
      await shoot(ctx, o),
      await shoot(ctx, o),
      await shoot(ctx, o),
    ];
    await ctx.queue.remove("render-screenshot", vanishedId);
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    // One consumer: throws on one job's first try (its retry is delayed), fails one for good, completes one
    // without settling its render the first time, and holds every other try until the end.
    let completedOnce = false;
    let failedOnce = false;
    const consumer = consumed(ctx, async (renderId) => {
      if (renderId === delayedId && !failedOnce) {
        failedOnce = true;
        throw new Error("a passing failure");
      }
      if (renderId === failedId) throw new PermanentJobError("gone for good");
      if (renderId === completedId && !completedOnce) {
        completedOnce = true;
        return;
      }
      return held;
    });
    const state = (id: string) => ctx.queue.state("render-screenshot", id);
    await until(async () => (await state(completedId)) === "completed");
    await until(async () => (await state(failedId)) === "failed");
    await until(async () => (await state(delayedId)) === "delayed");
    expect(await state(activeId)).toBe("active");
    // The delayed job waits 2 s before its second try (which is held as well): the sweep below reads it
    // well within that time.
    try {
      expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
        requeued: 2,
        failed: 1,
        admitted: 0,
      });
      expect(await row(failedId)).toMatchObject({
        status: "failed",
        error: "the render could not be completed; the credits were refunded",
      });
      expect(await balance(o.orgId)).toBe(60);
      for (const id of [vanishedId, activeId, delayedId, completedId])
        expect((await row(id)).status).toBe("pending");
      // The vanished job is back; the completed job that left its render pending was removed and
      // queued again (waiting, or already taken by the consumer).
      expect(["waiting", "active"]).toContain(await state(vanishedId));
      expect(["waiting", "active"]).toContain(await state(completedId));
      // Nothing to do on the next pass.
      expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
        requeued: 0,
        failed: 0,
        admitted: 0,
      });
    } finally {
      release();
      await consumer.close({ graceMs: 1000 });
    }
  });

  test("tried RENDER_TRIES times fails with its refund; one try fewer is run again", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 100);
    const [spent, left] = [await shoot(ctx, o), await shoot(ctx, o)];
    await handle.db
      .update(screenshotRenders)
      .set({ attempts: RENDER_TRIES })
      .where(eq(screenshotRenders.id, spent));
    await handle.db
      .update(screenshotRenders)
      .set({ attempts: RENDER_TRIES - 1 })
      .where(eq(screenshotRenders.id, left));
    for (const id of [spent, left]) await ctx.queue.remove("render-screenshot", id);
    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 1,
      failed: 1,
      admitted: 0,
    });
    expect((await row(spent)).status).toBe("failed");
    expect((await row(left)).status).toBe("pending");
    expect(await ctx.queue.state("render-screenshot", left)).toBe("waiting");
    expect(await balance(o.orgId)).toBe(90);
    // A second pass: the failed one is not failed (nor refunded) again.
    await ctx.queue.remove("render-screenshot", left);
    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 1,
      failed: 0,
      admitted: 0,
    });
    expect(await balance(o.orgId)).toBe(90);
  });

  test("a render that ends while the sweeper looks at its job is not run again", async () => {
    const inner = createMemoryQueue({ log });
    let endNow: string | null = null;
    let ctx!: RenderContext;
    const queue: JobQueue = {
      ...inner,
      async state(name, jobId) {
        const s = await inner.state(name, jobId);
        // The daemon ends the render between the sweeper's read and its re-enqueue.
        if (jobId === endNow)
          await completeRender(ctx, jobId, { imageKey: "k", width: 1, height: 1, warnings: [] });
        return s;
      },
    };
    ctx = renderCtx({ queue });
    const o = await org(ctx);
    const id = await shoot(ctx, o);
    await inner.remove("render-screenshot", id);
    endNow = id;
    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 0,
      failed: 0,
      admitted: 0,
    });
    expect(await inner.state("render-screenshot", id)).toBe("missing");
    expect((await row(id)).status).toBe("done");
  });

  test("an admitted render whose failed job was already failed by the daemon is not counted", async () => {
    const inner = createMemoryQueue({ log });
    let failNow: string | null = null;
    let ctx!: RenderContext;
    const queue: JobQueue = {
      ...inner,
      async state(name, jobId) {
        if (jobId !== failNow) return inner.state(name, jobId);
        // The daemon fails the render (with its refund) just as the sweeper reads its failed job.
        await failRender(ctx, jobId, "failed by the daemon");
        return "failed";
      },
    };
    ctx = renderCtx({ queue });
    const o = await org(ctx, 100);
    const id = await shoot(ctx, o);
    failNow = id;
    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 0,
      failed: 0,
      admitted: 0,
    });
    expect((await row(id)).error).toBe("failed by the daemon");
    expect(await balance(o.orgId)).toBe(100);
  });

  test("the oldest admitted first, `limit` at a time; then lost admissions are admitted, `limit` organizations at a time", async () => {
    const ctx = renderCtx({ cap: 5 });
    const o = await org(ctx);
    const ids = [await shoot(ctx, o), await shoot(ctx, o), await shoot(ctx, o)];
    for (const [i, id] of ids.entries()) {
      await ctx.queue.remove("render-screenshot", id);
      await handle.db
        .update(screenshotRenders)
        .set({ dispatchedAt: new Date(Date.now() - 60_000 + i * 1000) })
        .where(eq(screenshotRenders.id, id));
    }
    // An ended render admitted long before is not the sweeper's: it takes no room in the window.
    const [ended] = await waiting(o, 1);
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done", dispatchedAt: new Date(Date.now() - 300_000) })
      .where(eq(screenshotRenders.id, ended!));
    // The middle one is the oldest admitted.
    await handle.db
      .update(screenshotRenders)
      .set({ dispatchedAt: new Date(Date.now() - 120_000) })
      .where(eq(screenshotRenders.id, ids[1]!));
    expect(await sweepPendingRenders(ctx, { limit: 1 })).toEqual({ requeued: 1, failed: 0, admitted: 0 });
    expect(await Promise.all(ids.map((id) => ctx.queue.state("render-screenshot", id)))).toEqual([
      "missing",
      "waiting",
      "missing",
    ]);
    expect(await sweepPendingRenders(ctx)).toEqual({ requeued: 2, failed: 0, admitted: 0 });

    // Lost admissions: three organizations with waiting renders and room; one per pass with limit 1.
    const orgs = [await org(ctx), await org(ctx), await org(ctx)];
    const lost = [];
    for (const x of orgs) lost.push(...(await waiting(x, 2)));
    expect(await sweepPendingRenders(ctx, { limit: 1 })).toEqual({ requeued: 0, failed: 0, admitted: 2 });
    expect(await sweepPendingRenders(ctx)).toEqual({ requeued: 0, failed: 0, admitted: 4 });
    expect(await Promise.all(lost.map((id) => ctx.queue.state("render-screenshot", id)))).toEqual(
      Array(6).fill("waiting"),
    );
  });
});
