import { findBrowser } from "@site/browser";
import { screenshotRenders, type Tx } from "@site/db";
import {
  AppError,
  type Context,
  type CreditReason,
  debitCredits,
  type InWork,
  isUuid,
  notFound,
  outageOf,
  type Principal,
  recordDebit,
  refundOnce,
  unavailableError,
} from "@site/domain/core";
import { grantMemberUrl } from "@site/domain/media";
import { getOwnSite } from "@site/domain/sites";
import type { JobQueue } from "@site/queue";
import { and, asc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { recordRenderEnded, renderView } from "./event_views.ts";
import type { QueueAnswer, RenderView, ScreenshotRequestBody } from "./models.ts";
import { type CaptureOptions, type LookOptions, SCREENSHOT_CREDITS, toScreenshotRequest } from "./options.ts";
import { upsertScreenshotProject } from "./projects.ts";
import { pendingRender } from "./render_tries.ts";
import { findStyle } from "./styles.ts";

export * from "./render_tries.ts";

/** What queueing and sweeping renders use: the context plus the render queue. */
export type RenderContext = Context & { queue: JobQueue };

/** A render's stored options: the look, the capture settings it was queued with, and recapture. */
export type RenderOptions = { look: LookOptions; capture: CaptureOptions; recapture: boolean };

/**
 * Queues a screenshot: checks the page URL (400), the style (404), prices an estimate for free (200),
 * refuses without a browser (501) before charging; then in ONE transaction debits 10 credits (402 when
 * short; the balance never goes negative), writes the ledger entry, upserts the project, writes the
 * pending render and admits it when its organization has fewer than RENDER_ORG_CONCURRENCY renders in
 * progress (0470); after commit an admitted render is enqueued with job id = render id. A render not
 * admitted waits, pending, for one of its organization's renders to end. A failed enqueue refunds and
 * answers 502.
 */
export async function queueScreenshot(
  ctx: RenderContext,
  principal: Principal,
  siteId: string,
  body: ScreenshotRequestBody,
  inWork?: InWork<QueueAnswer>,
): Promise<QueueAnswer> {
  const site = await getOwnSite(ctx, principal, siteId);
  const req = toScreenshotRequest(body, ctx.config.fetchAllowHosts, {
    localNetwork: ctx.config.allowLocalNetworkForDevelopment,
  });
  if (req.look.styleId !== null && !findStyle(req.look.styleId))
    throw new AppError("NOT_FOUND", `styleId: no screenshot style "${req.look.styleId}"`, [
      { field: "styleId", message: "unknown style" },
    ]);
  if (req.estimateOnly) return { estimate: true, credits: SCREENSHOT_CREDITS };
  const answerOf = (renderId: string): QueueAnswer => ({
    estimate: false,
    renderId,
    status: "pending",
    sourceUrl: req.url,
    credits: SCREENSHOT_CREDITS,
  });
  if (!findBrowser(ctx.config.chromiumPath))
    throw new AppError(
      "NOT_CONFIGURED",
      "screenshot rendering is not configured on this server (no Chromium)",
    );

  const { renderId, admitted } = await ctx.db.transaction(async (tx) => {
    await debitCredits(tx, principal.orgId, SCREENSHOT_CREDITS, `a screenshot costs ${SCREENSHOT_CREDITS}`);
    const project = await upsertScreenshotProject(tx, {
      siteId: site.id,
      sourceUrl: req.url,
      capture: req.capture,
    });
    const { id: projectId, ...capture } = project;
    const options: RenderOptions = { look: req.look, capture, recapture: req.recapture };
    const { id, admitted } = await insertPendingRender(
      ctx,
      tx,
      {
        siteId: site.id,
        orgId: principal.orgId,
        projectId,
        sourceUrl: req.url,
        options,
        credits: SCREENSHOT_CREDITS,
      },
      "screenshot_debit",
    );
    // The request's answer commits with the charge (decision 1411).
    await inWork?.(tx, answerOf(id));
    return { renderId: id, admitted };
  });

  await dispatchQueued(ctx, renderId, admitted);
  return answerOf(renderId);
}

/**
 * After a render (still or clip) was queued and committed: enqueues it when admitted (job id = render
 * id) and the other renders its admission let in. A failed enqueue fails the render with its refund
 * and answers 503 (a queue outage, Retry-After) or 502: nothing was charged in the end.
 */
export async function dispatchQueued(
  ctx: RenderContext,
  renderId: string,
  admitted: string[],
): Promise<void> {
  if (admitted.includes(renderId)) {
    try {
      await ctx.queue.enqueue("render-screenshot", { renderId }, { jobId: renderId });
    } catch (err) {
      ctx.log.error("enqueue failed; refunding", { renderId, cause: err });
      await failRender(ctx, renderId, "the render queue is unavailable; the credits were refunded");
      // Redis down or too slow is an outage: 503 with Retry-After (decision 0800); no credits were charged.
      const outage = outageOf(err);
      if (outage)
        throw unavailableError(
          {
            ...outage,
            sentence:
              "The render queue is unavailable right now; no credits were charged. Try again shortly.",
          },
          ctx.config.retryAfterSeconds,
        );
      throw new AppError("RENDERER_ERROR", "the renderer is unavailable; no credits were charged");
    }
  }
  await enqueueAdmitted(
    ctx,
    admitted.filter((id) => id !== renderId),
  );
}

/** Namespace of the per-organization advisory lock that serializes admission (0470). */
const ADMISSION_LOCK = 470;

/**
 * Inside the transaction that debited its credits (`debitCredits`): writes the pending render (still
 * or clip), the ledger row of the debit for it, and runs admission. Returns the render's id and the
 * ids admitted, which the caller hands to `dispatchQueued` after commit.
 */
export async function insertPendingRender(
  ctx: Context,
  tx: Tx,
  values: Omit<typeof screenshotRenders.$inferInsert, "status"> & { orgId: string; credits: number },
  reason: CreditReason,
): Promise<{ id: string; admitted: string[] }> {
  const [render] = await tx
    .insert(screenshotRenders)
    .values({ ...values, status: "pending" })
    .returning({ id: screenshotRenders.id });
  await recordDebit(tx, { orgId: values.orgId, amount: values.credits, reason, subjectId: render.id });
  return { id: render.id, admitted: await admitRenders(ctx, tx, values.orgId) };
}

/**
 * Admits pending renders of an organization, oldest first, until RENDER_ORG_CONCURRENCY of them are in
 * progress (admitted and not ended), inside the caller's transaction. A transaction-scoped advisory lock
 * per organization serializes every admission of that organization (queueing, a render ending, the
 * sweeper), so the count it reads cannot be raced past the cap. Returns the ids newly admitted: the
 * caller enqueues them after commit (a crash in between leaves them admitted without a job: the sweeper
 * enqueues those).
 */
export async function admitRenders(ctx: Context, tx: Tx, orgId: string): Promise<string[]> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ADMISSION_LOCK}, hashtext(${orgId}))`);
  const [{ n }] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(screenshotRenders)
    .where(
      and(
        eq(screenshotRenders.orgId, orgId),
        eq(screenshotRenders.status, "pending"),
        isNotNull(screenshotRenders.dispatchedAt),
      ),
    );
  const free = ctx.config.renderOrgConcurrency - n;
  if (free <= 0) return [];
  const next = tx
    .select({ id: screenshotRenders.id })
    .from(screenshotRenders)
    .where(
      and(
        eq(screenshotRenders.orgId, orgId),
        eq(screenshotRenders.status, "pending"),
        isNull(screenshotRenders.dispatchedAt),
      ),
    )
    .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id))
    .limit(free);
  const rows = await tx
    .update(screenshotRenders)
    .set({ dispatchedAt: sql`now()`, updatedAt: sql`now()` })
    .where(inArray(screenshotRenders.id, next))
    .returning({ id: screenshotRenders.id });
  return rows.map((r) => r.id);
}

/** Enqueues renders just admitted; a failure is left to the sweeper (the render stays admitted). */
export async function enqueueAdmitted(ctx: RenderContext, ids: string[]): Promise<void> {
  for (const renderId of ids) {
    try {
      await ctx.queue.enqueue("render-screenshot", { renderId }, { jobId: renderId });
    } catch (err) {
      ctx.log.warn("could not enqueue an admitted render; the sweeper will", {
        renderId,
        cause: String(err),
      });
    }
  }
}

/** A render row by id (any site), for the daemon. */
export async function findRender(ctx: Context, renderId: string) {
  if (!isUuid(renderId)) return null;
  const [row] = await ctx.db
    .select()
    .from(screenshotRenders)
    .where(eq(screenshotRenders.id, renderId))
    .limit(1);
  return row ?? null;
}

/** The render of a site as the API answers it; 404 for an unknown render or another site's. */
export async function getRender(
  ctx: Context,
  principal: Principal,
  siteId: string,
  renderId: string,
): Promise<RenderView> {
  const site = await getOwnSite(ctx, principal, siteId);
  const row = await findRender(ctx, renderId);
  if (row?.kind !== "still" || row.siteId !== site.id) throw notFound("screenshot render");
  const view = renderView(row);
  if (view.status !== "done" || !row.imageKey) return view;
  return { ...view, displayUrl: grantMemberUrl(ctx, site.id, row.imageKey) };
}

/** What a finished try leaves on its render: its output (a clip's poster and library entry too). */
export type RenderResult = {
  imageKey: string;
  width: number;
  height: number;
  warnings: string[];
  /** A clip's poster frame and its social media library entry (a still has neither). */
  posterKey?: string;
  mediaId?: string;
};

/**
 * Inside the caller's transaction (the one that lists the try's output, decision 1440): marks a pending
 * render (still or clip) done with its output when `tryToken` (given) still owns it, records its end
 * event and admits its organization's next waiting render. Returns the ids admitted (the caller enqueues
 * them after commit), or null when the render was no longer pending or no longer this try's.
 */
export async function completeRenderIn(
  ctx: Context,
  tx: Tx,
  renderId: string,
  result: RenderResult,
  tryToken?: string,
): Promise<string[] | null> {
  const [row] = await tx
    .update(screenshotRenders)
    .set({
      status: "done",
      stage: null,
      imageKey: result.imageKey,
      posterKey: result.posterKey,
      mediaId: result.mediaId,
      width: result.width,
      height: result.height,
      warnings: result.warnings,
      error: null,
      heartbeatAt: null,
      updatedAt: sql`now()`,
      finishedAt: sql`now()`,
    })
    .where(pendingRender(renderId, tryToken))
    .returning();
  if (!row) return null;
  // screenshot.completed commits with the render's end (the webhook outbox, decision 0840).
  await recordRenderEnded(ctx, tx, row);
  return admitRenders(ctx, tx, row.orgId);
}

/**
 * Marks a pending render (still or clip) done with its output (see completeRenderIn) in a transaction of
 * its own and enqueues what its end admitted; false when it was no longer pending (or no longer owned by
 * `tryToken`).
 */
export async function completeRender(
  ctx: RenderContext,
  renderId: string,
  result: RenderResult,
  tryToken?: string,
): Promise<boolean> {
  const admitted = await ctx.db.transaction((tx) => completeRenderIn(ctx, tx, renderId, result, tryToken));
  if (admitted) await enqueueAdmitted(ctx, admitted);
  return admitted !== null;
}

/**
 * Fails a pending render (a still or a clip) for good and refunds its credits exactly once (the ledger is unique per render
 * and reason, so a second call, a retry or a racing daemon refunds nothing), and admits its
 * organization's next waiting render in the same transaction. False when not pending, or, with a
 * `tryToken`, when that try no longer owns the render (a late host fails nothing: decision 1440).
 */
export async function failRender(
  ctx: RenderContext,
  renderId: string,
  error: string,
  tryToken?: string,
): Promise<boolean> {
  const { failed, admitted } = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(screenshotRenders)
      .set({
        status: "failed",
        stage: null,
        error: error.slice(0, 500),
        heartbeatAt: null,
        updatedAt: sql`now()`,
        finishedAt: sql`now()`,
      })
      .where(pendingRender(renderId, tryToken))
      .returning();
    if (!row) return { failed: false, admitted: [] };
    // screenshot.failed or clip.failed commits with the render's end (decision 0840).
    await recordRenderEnded(ctx, tx, row);
    await refundOnce(tx, {
      orgId: row.orgId,
      amount: row.credits,
      reason: row.kind === "clip" ? "clip_refund" : "screenshot_refund",
      subjectId: renderId,
    });
    return { failed: true, admitted: await admitRenders(ctx, tx, row.orgId) };
  });
  await enqueueAdmitted(ctx, admitted);
  return failed;
}
