import { screenshotRenders, serviceRecords } from "@site/db";
import { and, eq, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { RENDER_TRIES } from "./render_tries.ts";
import { admitRenders, enqueueAdmitted, failRender, type RenderContext } from "./renders.ts";

/** The service record whose time says when a host last took the farm's periodic sweep (1506). */
export const SWEEP_TURN_RECORD = "render_sweep_turn";

/**
 * Takes the farm's sweep turn for this period: true for one host per `everyMs` (the first to ask once
 * the last turn is older than 0.8 × `everyMs`, so the same host's next tick finds it free). Every pass
 * looks at every render of the farm, so N hosts sweeping each period did the same work N times: with
 * BullMQ, a job-state lookup in Redis per admitted render waiting, per host, every period (1506).
 */
export async function takeSweepTurn(ctx: RenderContext, everyMs: number, holder: string): Promise<boolean> {
  const lapse = `${Math.round(everyMs * 0.8)} milliseconds`;
  const rows = await ctx.db
    .insert(serviceRecords)
    .values({ name: SWEEP_TURN_RECORD, value: holder, updatedAt: sql`now()` })
    .onConflictDoUpdate({
      target: serviceRecords.name,
      set: { value: holder, updatedAt: sql`now()` },
      setWhere: sql`${serviceRecords.updatedAt} < now() - ${lapse}::interval`,
    })
    .returning({ name: serviceRecords.name });
  return rows.length > 0;
}

/** What one sweeper pass did. */
export type SweepResult = { requeued: number; failed: number; admitted: number };

/**
 * One sweeper pass (0472). (1) Every admitted pending render admitted more than `staleMs` ago (1 s by
 * default: the gap between the API's commit and its enqueue) has its job looked up by id: a job that
 * vanished (a crash of the in-process queue, a Redis that lost its data, a trimmed job, an enqueue that
 * failed) is enqueued again; one whose job failed for good, or that was tried too often, fails with its
 * refund; a render whose try beats its heartbeat (a live host runs it, its job lost with Redis's data)
 * is left to that host (1441). (2) Organizations with waiting renders and free room get them admitted (a lost admission).
 * Enqueueing is idempotent by job id, so a pass racing the API or another daemon runs nothing twice.
 */
export async function sweepPendingRenders(
  ctx: RenderContext,
  opts: { staleMs?: number; limit?: number } = {},
): Promise<SweepResult> {
  const cutoff = new Date(ctx.clock.now().getTime() - (opts.staleMs ?? 1000));
  const limit = opts.limit ?? 500;
  // A try whose heartbeat is younger than the job lock runs on a live host (decision 1441). With BullMQ
  // its job may be gone from a Redis that came back empty while the host still runs it: running it again
  // would film, store and list the render twice. The in-process queue's jobs live and die with the one
  // process that runs them, so a heartbeat there is never another host's.
  const liveSince = `${ctx.config.renderJobLockMs} milliseconds`;
  const live =
    ctx.queue.driver === "bullmq"
      ? sql<boolean>`coalesce(${screenshotRenders.heartbeatAt} > now() - ${liveSince}::interval, false)`
      : sql<boolean>`false`;
  const rows = await ctx.db
    .select({ id: screenshotRenders.id, attempts: screenshotRenders.attempts, live })
    .from(screenshotRenders)
    .where(
      and(
        eq(screenshotRenders.status, "pending"),
        isNotNull(screenshotRenders.dispatchedAt),
        lt(screenshotRenders.dispatchedAt, cutoff),
      ),
    )
    .orderBy(screenshotRenders.dispatchedAt)
    .limit(limit);
  const result: SweepResult = { requeued: 0, failed: 0, admitted: 0 };
  for (const row of rows) {
    if (row.live) continue;
    const state = await ctx.queue.state("render-screenshot", row.id);
    if (state === "waiting" || state === "active" || state === "delayed") continue;
    if (state === "failed" || row.attempts >= RENDER_TRIES) {
      if (await failRender(ctx, row.id, "the render could not be completed; the credits were refunded"))
        result.failed++;
      continue;
    }
    // Missing, or completed without settling the render: run it again, unless it ended meanwhile.
    const [still] = await ctx.db
      .update(screenshotRenders)
      .set({ updatedAt: sql`now()` })
      .where(and(eq(screenshotRenders.id, row.id), eq(screenshotRenders.status, "pending")))
      .returning({ id: screenshotRenders.id });
    if (!still) continue;
    if (state !== "missing") await ctx.queue.remove("render-screenshot", row.id);
    await ctx.queue.enqueue("render-screenshot", { renderId: row.id }, { jobId: row.id });
    ctx.log.warn("re-enqueued a render whose job vanished", { renderId: row.id, jobState: state });
    result.requeued++;
  }
  const waiting = await ctx.db
    .selectDistinct({ orgId: screenshotRenders.orgId })
    .from(screenshotRenders)
    .where(and(eq(screenshotRenders.status, "pending"), isNull(screenshotRenders.dispatchedAt)))
    .limit(limit);
  for (const { orgId } of waiting) {
    const admitted = await ctx.db.transaction((tx) => admitRenders(ctx, tx, orgId));
    await enqueueAdmitted(ctx, admitted);
    result.admitted += admitted.length;
  }
  return result;
}
