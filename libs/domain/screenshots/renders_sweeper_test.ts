import { beforeEach, describe, expect, test } from "bun:test";
import { screenshotRenders, serviceRecords } from "@site/db";
import { createMemoryQueue, type JobQueue, PermanentJobError } from "@site/queue";
import { eq } from "drizzle-orm";
import { SWEEP_TURN_RECORD, sweepPendingRenders, takeSweepTurn } from "./render_sweep.ts";
import { completeRender, failRender, RENDER_TRIES, type RenderContext } from "./renders.ts";
import {
  balance,
  handle,
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
// queue, without a browser (the configured Chromium is only looked up, never started). This file: the
// sweeper (0472). Focused tests of renders.ts with renders_admission_test.ts and
// renders_lifecycle_test.ts (docs/mutation/renders.md).

useRendersDb();

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

describe("the farm's sweep turn (1506)", () => {
  test("one host per period takes it; it lapses after the period, for whichever host asks first", async () => {
    const ctx = renderCtx();
    await handle.db.delete(serviceRecords).where(eq(serviceRecords.name, SWEEP_TURN_RECORD));
    expect(await takeSweepTurn(ctx, 500, "a")).toBe(true);
    // the other hosts' ticks within the period, and the holder's own, find it taken
    expect(await takeSweepTurn(ctx, 500, "b")).toBe(false);
    expect(await takeSweepTurn(ctx, 500, "a")).toBe(false);
    await Bun.sleep(450);
    expect(await takeSweepTurn(ctx, 500, "b")).toBe(true);
    expect(await takeSweepTurn(ctx, 500, "a")).toBe(false);
    const [turn] = await handle.db
      .select()
      .from(serviceRecords)
      .where(eq(serviceRecords.name, SWEEP_TURN_RECORD));
    expect(turn?.value).toBe("b");
  });
});
