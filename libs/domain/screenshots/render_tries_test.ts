import { beforeEach, describe, expect, test } from "bun:test";
import { screenshotRenders } from "@site/db";
import { createBullQueue } from "@site/queue";
import { eq, sql } from "drizzle-orm";
import { sweepPendingRenders } from "./render_sweep.ts";
import {
  beatRenderTry,
  beginRenderTry,
  completeRender,
  failRender,
  releaseRenderTry,
  setRenderStage,
} from "./renders.ts";
import { balance, handle, log, org, renderCtx, row, shoot, useRendersDb } from "./testing/renders_bed.ts";

// One owner per render try (issue 38, decisions 1440 and 1441), on a real PostgreSQL: a try that a later
// try superseded (a host frozen past its lock, woken after another took the job) changes nothing, and
// the sweeper leaves a render whose try beats its heartbeat to the live host running it.

useRendersDb();

const OUT = { imageKey: "k", width: 1, height: 1, warnings: [] as string[] };

describe("a superseded try (1440)", () => {
  test("completes, fails, hands back and beats nothing; the owning try does", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const id = await shoot(ctx, o);
    const zombie = await beginRenderTry(ctx, id);
    const owner = await beginRenderTry(ctx, id);
    expect(zombie?.tryToken).toBeString();
    expect(owner?.tryToken).not.toBe(zombie?.tryToken);
    const late = zombie!.tryToken;

    expect(await beatRenderTry(ctx, id, late)).toBe(false);
    await setRenderStage(ctx, id, "store", late);
    await releaseRenderTry(ctx, id, late);
    expect(await failRender(ctx, id, "late failure", late)).toBe(false);
    expect(await completeRender(ctx, id, OUT, late)).toBe(false);
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 2, stage: "film" });
    expect(await balance(o.orgId)).toBe(990);

    expect(await beatRenderTry(ctx, id, owner!.tryToken)).toBe(true);
    expect(await completeRender(ctx, id, OUT, owner!.tryToken)).toBe(true);
    expect(await row(id)).toMatchObject({ status: "done", attempts: 2, heartbeatAt: null });
    // Once it ended, the owner's token changes nothing either.
    expect(await failRender(ctx, id, "after the end", owner!.tryToken)).toBe(false);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)("the sweeper and a live host's render (BullMQ, 1441)", () => {
  beforeEach(async () => {
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done" })
      .where(eq(screenshotRenders.status, "pending"));
  });

  test("a job Redis lost is not enqueued again while its try beats; once the heartbeat lapses it is", async () => {
    const queue = createBullQueue({
      redisUrl: process.env.TEST_REDIS_URL as string,
      log,
      prefix: `tries-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`,
    });
    const ctx = renderCtx({ queue, env: { RENDER_JOB_LOCK_MS: "5000" } });
    const o = await org(ctx);
    const id = await shoot(ctx, o);
    const running = await beginRenderTry(ctx, id);
    // Redis came back empty: the job is gone while the host still runs it.
    await queue.remove("render-screenshot", id);
    expect(await queue.state("render-screenshot", id)).toBe("missing");

    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 0,
      failed: 0,
      admitted: 0,
    });
    expect(await queue.state("render-screenshot", id)).toBe("missing");

    // The host died: its heartbeat is older than the lock.
    await handle.db
      .update(screenshotRenders)
      .set({ heartbeatAt: sql`now() - interval '6 seconds'` })
      .where(eq(screenshotRenders.id, id));
    expect(await sweepPendingRenders(ctx, { staleMs: -1000 })).toEqual({
      requeued: 1,
      failed: 0,
      admitted: 0,
    });
    expect(await queue.state("render-screenshot", id)).toBe("waiting");
    expect(running?.attempts).toBe(1);
  });
});
