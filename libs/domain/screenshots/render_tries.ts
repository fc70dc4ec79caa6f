import { screenshotRenders } from "@site/db";
import type { Context } from "@site/domain/core";
import { JOBS } from "@site/queue";
import { and, eq, type SQL, sql } from "drizzle-orm";

/**
 * How many times a render is tried in all, handed-back tries not counted: the catalog's attempts for its
 * job, counted on the render so a re-enqueued job does not start a new budget (0009).
 */
export const RENDER_TRIES = JOBS["render-screenshot"].attempts;

/**
 * Thrown inside the transaction that lists a try's output when the try no longer owns its render (a
 * later try began on another host, or the render ended): the listing rolls back with it and the bytes
 * the try stored are deleted, so a late host lists nothing and charges nothing (decision 1440).
 */
export class RenderTryLostError extends Error {
  constructor(renderId: string) {
    super(`render ${renderId}: this try no longer owns the render; what it wrote was removed`);
    this.name = "RenderTryLostError";
  }
}

/**
 * The render is pending and, when `tryToken` is given, owned by that try: the condition of every change
 * a try makes (stage, heartbeat, completion, failure, hand-back). Without a token (the sweeper, the API's
 * failed enqueue) only the render's status is checked.
 */
export function pendingRender(renderId: string, tryToken?: string | null): SQL {
  const pending = and(eq(screenshotRenders.id, renderId), eq(screenshotRenders.status, "pending")) as SQL;
  return tryToken ? (and(pending, eq(screenshotRenders.tryToken, tryToken)) as SQL) : pending;
}

/**
 * Starts a try of a pending render: counts it, sets the stage and makes the try the render's owner (a
 * fresh try token, its first heartbeat); null when the render is not pending.
 */
export async function beginRenderTry(ctx: Context, renderId: string) {
  const [row] = await ctx.db
    .update(screenshotRenders)
    .set({
      attempts: sql`${screenshotRenders.attempts} + 1`,
      stage: "film",
      tryToken: sql`gen_random_uuid()`,
      heartbeatAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(pendingRender(renderId))
    .returning();
  return row ? { ...row, tryToken: row.tryToken as string } : null;
}

/** Records the stage a pending render is in (film, compose, store), by its owning try when given. */
export async function setRenderStage(
  ctx: Context,
  renderId: string,
  stage: "film" | "compose" | "store",
  tryToken?: string,
) {
  await ctx.db
    .update(screenshotRenders)
    .set({ stage, updatedAt: sql`now()` })
    .where(pendingRender(renderId, tryToken));
}

/** The owning try says it is alive; false when it no longer owns the render (or the render ended). */
export async function beatRenderTry(ctx: Context, renderId: string, tryToken: string): Promise<boolean> {
  const rows = await ctx.db
    .update(screenshotRenders)
    .set({ heartbeatAt: sql`now()` })
    .where(pendingRender(renderId, tryToken))
    .returning({ id: screenshotRenders.id });
  return rows.length > 0;
}

/**
 * Beats the try's heartbeat every third of RENDER_JOB_LOCK_MS while it runs (the sweeper takes a render
 * whose heartbeat is older than that lock for one no live host runs); returns the stop function.
 */
export function startRenderHeartbeat(ctx: Context, renderId: string, tryToken: string): () => void {
  const timer = setInterval(
    () => {
      beatRenderTry(ctx, renderId, tryToken).catch((err) =>
        ctx.log.warn("render heartbeat failed", { renderId, cause: String(err) }),
      );
    },
    Math.max(100, Math.floor(ctx.config.renderJobLockMs / 3)),
  );
  return () => clearInterval(timer);
}

/**
 * Hands back a try that a shutdown interrupted: the try is not counted (issue 18.5), the render stays
 * pending and admitted, and its job waits again in the queue. Only the owning try, when its token is given.
 */
export async function releaseRenderTry(ctx: Context, renderId: string, tryToken?: string): Promise<void> {
  await ctx.db
    .update(screenshotRenders)
    .set({
      attempts: sql`greatest(${screenshotRenders.attempts} - 1, 0)`,
      stage: null,
      heartbeatAt: null,
      updatedAt: sql`now()`,
    })
    .where(pendingRender(renderId, tryToken));
}
