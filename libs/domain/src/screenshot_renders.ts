import { and, eq, lt, sql } from "drizzle-orm";
import { creditLedger, organizations, screenshotRenders } from "@site/db";
import type { RenderQueue } from "@site/queue";
import type { Principal } from "./auth.ts";
import type { Context } from "./context.ts";
import { AppError, notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { mediaPath } from "./media_grants.ts";
import { findBrowser } from "./screenshot_browser.ts";
import {
  type CaptureOptions,
  type LookOptions,
  parseScreenshotRequest,
  SCREENSHOT_CREDITS,
} from "./screenshot_options.ts";
import { upsertScreenshotProject } from "./screenshot_projects.ts";
import { findStyle } from "./screenshot_styles.ts";
import { getOwnSite } from "./sites.ts";

/** What queueing and sweeping renders use: the context plus the render queue. */
export type RenderContext = Context & { queue: RenderQueue };

/** A render's stored options: the look, the capture settings it was queued with, and recapture. */
export type RenderOptions = { look: LookOptions; capture: CaptureOptions; recapture: boolean };

/** Where a render stands: pending, done, or failed (the spec leaves the failure value open; see 0401). */
export type RenderStatus = "pending" | "done" | "failed";

/** The screenshot render as the API answers it. */
export type RenderView = {
  renderId: string;
  status: RenderStatus;
  sourceUrl: string;
  imageUrl: string | null;
  credits: number;
  error: string | null;
  width?: number;
  height?: number;
  warnings?: string[];
};

/** The answer to a screenshot POST. */
export type QueueAnswer =
  | { estimate: true; credits: number }
  | { estimate: false; renderId: string; status: "pending"; sourceUrl: string; credits: number };

/**
 * Queues a screenshot: validates the body (400), the style (404), prices an estimate for free (200),
 * refuses without a browser (501) before charging; then in ONE transaction debits 10 credits (402 when
 * short; the balance never goes negative), writes the ledger entry, upserts the project and writes the
 * pending render; then enqueues with job id = render id. A failed enqueue refunds and answers 502.
 */
export async function queueScreenshot(
  ctx: RenderContext,
  principal: Principal,
  siteId: string,
  body: unknown,
): Promise<QueueAnswer> {
  const site = await getOwnSite(ctx, principal, siteId);
  const req = parseScreenshotRequest(body, ctx.config.fetchAllowHosts);
  if (req.look.styleId !== null && !findStyle(req.look.styleId))
    throw new AppError("NOT_FOUND", `styleId: no screenshot style "${req.look.styleId}"`, [
      { field: "styleId", message: "unknown style" },
    ]);
  if (req.estimateOnly) return { estimate: true, credits: SCREENSHOT_CREDITS };
  if (!findBrowser(ctx.config.chromiumPath))
    throw new AppError(
      "NOT_CONFIGURED",
      "screenshot rendering is not configured on this server (no Chromium)",
    );

  const renderId = await ctx.db.transaction(async (tx) => {
    const [debited] = await tx
      .update(organizations)
      .set({ credits: sql`${organizations.credits} - ${SCREENSHOT_CREDITS}` })
      .where(
        and(eq(organizations.id, principal.orgId), sql`${organizations.credits} >= ${SCREENSHOT_CREDITS}`),
      )
      .returning({ credits: organizations.credits });
    if (!debited)
      throw new AppError("QUOTA_EXCEEDED", `not enough AI credits: a screenshot costs ${SCREENSHOT_CREDITS}`);
    const project = await upsertScreenshotProject(tx, {
      siteId: site.id,
      sourceUrl: req.url,
      capture: req.capture,
    });
    const { id: projectId, ...capture } = project;
    const options: RenderOptions = { look: req.look, capture, recapture: req.recapture };
    const [render] = await tx
      .insert(screenshotRenders)
      .values({
        siteId: site.id,
        orgId: principal.orgId,
        projectId,
        sourceUrl: req.url,
        status: "pending",
        options,
        credits: SCREENSHOT_CREDITS,
      })
      .returning({ id: screenshotRenders.id });
    await tx.insert(creditLedger).values({
      orgId: principal.orgId,
      delta: -SCREENSHOT_CREDITS,
      reason: "screenshot_debit",
      renderId: render.id,
    });
    return render.id;
  });

  try {
    await ctx.queue.enqueue("render-screenshot", { renderId }, { jobId: renderId });
  } catch (err) {
    ctx.log.error("enqueue failed; refunding", { renderId, cause: String(err) });
    await failRender(ctx, renderId, "the render queue is unavailable; the credits were refunded");
    throw new AppError("RENDERER_ERROR", "the renderer is unavailable; no credits were charged");
  }
  return { estimate: false, renderId, status: "pending", sourceUrl: req.url, credits: SCREENSHOT_CREDITS };
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

function renderView(row: NonNullable<Awaited<ReturnType<typeof findRender>>>): RenderView {
  const base: RenderView = {
    renderId: row.id,
    status: row.status,
    sourceUrl: row.sourceUrl,
    imageUrl: row.status === "done" && row.imageKey ? mediaPath(row.imageKey) : null,
    credits: row.credits,
    error: row.status === "failed" ? (row.error ?? "render failed") : null,
  };
  if (row.status !== "done") return base;
  return {
    ...base,
    width: row.width ?? 0,
    height: row.height ?? 0,
    warnings: (row.warnings ?? []) as string[],
  };
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
  if (!row || row.siteId !== site.id) throw notFound("screenshot render");
  return renderView(row);
}

/** Starts a try of a pending render: counts it and sets the stage; null when the render is not pending. */
export async function beginRenderTry(ctx: Context, renderId: string) {
  const [row] = await ctx.db
    .update(screenshotRenders)
    .set({ attempts: sql`${screenshotRenders.attempts} + 1`, stage: "film", updatedAt: sql`now()` })
    .where(and(eq(screenshotRenders.id, renderId), eq(screenshotRenders.status, "pending")))
    .returning();
  return row ?? null;
}

/** Records the stage a pending render is in (film, compose, store). */
export async function setRenderStage(ctx: Context, renderId: string, stage: "film" | "compose" | "store") {
  await ctx.db
    .update(screenshotRenders)
    .set({ stage, updatedAt: sql`now()` })
    .where(and(eq(screenshotRenders.id, renderId), eq(screenshotRenders.status, "pending")));
}

/** Marks a pending render done with its library image; false when it was no longer pending. */
export async function completeRender(
  ctx: Context,
  renderId: string,
  result: { imageKey: string; width: number; height: number; warnings: string[] },
): Promise<boolean> {
  const rows = await ctx.db
    .update(screenshotRenders)
    .set({
      status: "done",
      stage: null,
      imageKey: result.imageKey,
      width: result.width,
      height: result.height,
      warnings: result.warnings,
      error: null,
      updatedAt: sql`now()`,
      finishedAt: sql`now()`,
    })
    .where(and(eq(screenshotRenders.id, renderId), eq(screenshotRenders.status, "pending")))
    .returning({ id: screenshotRenders.id });
  return rows.length > 0;
}

/**
 * Fails a pending render for good and refunds its credits exactly once (the ledger is unique per render
 * and reason, so a second call, a retry or a racing daemon refunds nothing). False when not pending.
 */
export async function failRender(ctx: Context, renderId: string, error: string): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(screenshotRenders)
      .set({
        status: "failed",
        stage: null,
        error: error.slice(0, 500),
        updatedAt: sql`now()`,
        finishedAt: sql`now()`,
      })
      .where(and(eq(screenshotRenders.id, renderId), eq(screenshotRenders.status, "pending")))
      .returning({ orgId: screenshotRenders.orgId, credits: screenshotRenders.credits });
    if (!row) return false;
    const refunded = await tx
      .insert(creditLedger)
      .values({ orgId: row.orgId, delta: row.credits, reason: "screenshot_refund", renderId })
      .onConflictDoNothing()
      .returning({ id: creditLedger.id });
    if (refunded.length > 0)
      await tx
        .update(organizations)
        .set({ credits: sql`${organizations.credits} + ${row.credits}` })
        .where(eq(organizations.id, row.orgId));
    return true;
  });
}

/** How many times a render is re-enqueued by the sweeper before it fails for good. */
export const MAX_RENDER_TRIES = 6;

/**
 * Re-enqueues pending renders whose job vanished (trimmed, or lost with a Redis that restarted), and
 * fails (with refund) those whose job failed for good or that were tried too often. Only renders
 * untouched for `staleMs` are looked at, so a render being queued right now is never swept.
 */
export async function sweepPendingRenders(
  ctx: RenderContext,
  opts: { staleMs?: number; limit?: number } = {},
): Promise<{ requeued: number; failed: number }> {
  const cutoff = new Date(ctx.clock.now().getTime() - (opts.staleMs ?? 60_000));
  const rows = await ctx.db
    .select({ id: screenshotRenders.id, attempts: screenshotRenders.attempts })
    .from(screenshotRenders)
    .where(and(eq(screenshotRenders.status, "pending"), lt(screenshotRenders.updatedAt, cutoff)))
    .orderBy(screenshotRenders.updatedAt)
    .limit(opts.limit ?? 100);
  let requeued = 0;
  let failed = 0;
  for (const row of rows) {
    const state = await ctx.queue.state(row.id);
    if (state === "waiting" || state === "active" || state === "delayed") continue;
    if (state === "failed" || row.attempts >= MAX_RENDER_TRIES) {
      if (await failRender(ctx, row.id, "the render could not be completed; the credits were refunded"))
        failed++;
      continue;
    }
    await ctx.queue.remove(row.id);
    await ctx.queue.enqueue("render-screenshot", { renderId: row.id }, { jobId: row.id });
    await ctx.db
      .update(screenshotRenders)
      .set({ updatedAt: sql`now()` })
      .where(eq(screenshotRenders.id, row.id));
    ctx.log.warn("re-enqueued a render whose job vanished", { renderId: row.id, jobState: state });
    requeued++;
  }
  return { requeued, failed };
}
