import { describe, expect, test } from "bun:test";
import { screenshotRenders } from "@site/db";
import { createMemoryQueue, type JobQueue, QueueUnavailableError } from "@site/queue";
import { eq, sql } from "drizzle-orm";
import {
  admitRenders,
  dispatchQueued,
  enqueueAdmitted,
  queueScreenshot,
  type RenderContext,
} from "./renders.ts";
import {
  appError,
  balance,
  byAge,
  handle,
  inProgress,
  ledger,
  log,
  org,
  renderCtx,
  row,
  shoot,
  until,
  useRendersDb,
  waiting,
} from "./testing/renders_bed.ts";

// Render admission and settlement at the domain level, on a real PostgreSQL and the real in-process
// queue, without a browser (the configured Chromium is only looked up, never started). This file: queueing,
// dispatch and the per-organization cap and its order (0470), with the debit and its refund. With
// renders_lifecycle_test.ts and renders_sweeper_test.ts, the focused tests StrykerJS runs for renders.ts
// (docs/mutation/renders.md).

useRendersDb();

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
