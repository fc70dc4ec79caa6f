import { type Database, notifyWorkEnded, type screenshotRenders, socialMedia, type Tx } from "@site/db";
import type { Context } from "@site/domain/core";
import { grantMemberUrl, grantOrgMemberUrl, mediaPath } from "@site/domain/media";
import { socialMediaView } from "@site/domain/social";
import { recordEvent } from "@site/domain/webhooks";
import { eq } from "drizzle-orm";
import type { ClipView } from "./clip_models.ts";
import type { RenderView } from "./models.ts";

type RenderRow = typeof screenshotRenders.$inferSelect;

/** A still render as GET /api/v1/sites/<id>/screenshots/<renderId> answers it (without the member URL). */
export function renderView(row: RenderRow): RenderView {
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

/** A still render as its GET answers a member of its organization (with the member-signed image URL). */
export function memberRenderView(ctx: Context, row: RenderRow): RenderView {
  const view = renderView(row);
  if (view.status !== "done" || !row.imageKey || !row.siteId) return view;
  return { ...view, displayUrl: grantMemberUrl(ctx, row.siteId, row.imageKey) };
}

/** A clip as GET /api/v1/social/media/clips/<clipId> answers it; `db` may be a transaction. */
export async function clipView(ctx: Context, db: Database | Tx, row: RenderRow): Promise<ClipView> {
  // The stored spec (ClipOptions of clips.ts, read by shape so that the two files do not import each other).
  type Spec = { durationS: number; fps: number; width: number; height: number };
  const spec = (row.options as { clip: Spec }).clip;
  let media: ClipView["media"] = null;
  if (row.status === "done" && row.mediaId) {
    const [m] = await db.select().from(socialMedia).where(eq(socialMedia.id, row.mediaId)).limit(1);
    if (m) media = socialMediaView(ctx, m);
  }
  return {
    clipId: row.id,
    status: row.status,
    media,
    posterUrl:
      row.status === "done" && row.posterKey ? grantOrgMemberUrl(ctx, row.orgId, row.posterKey) : null,
    durationS: spec.durationS,
    fps: spec.fps,
    width: row.width ?? spec.width,
    height: row.height ?? spec.height,
    warnings: (row.warnings ?? []) as string[],
    error: row.status === "failed" ? (row.error ?? "the clip failed; the credits were refunded") : null,
  };
}

/**
 * Records a render's end as a webhook event in the caller's transaction (decision 0840):
 * screenshot.completed / screenshot.failed for a still, clip.completed / clip.failed for a clip, with the
 * resource as its GET answers it.
 */
export async function recordRenderEnded(ctx: Context, tx: Tx, row: RenderRow): Promise<void> {
  const done = row.status === "done";
  // Wakes whoever waits on it (get_screenshot/get_clip waitSeconds), at commit (render_waits.ts).
  await notifyWorkEnded(tx, row.id);
  if (row.kind === "clip")
    await recordEvent(tx, {
      orgId: row.orgId,
      type: done ? "clip.completed" : "clip.failed",
      data: () => clipView(ctx, tx, row),
    });
  else
    await recordEvent(tx, {
      orgId: row.orgId,
      type: done ? "screenshot.completed" : "screenshot.failed",
      data: () => memberRenderView(ctx, row),
    });
}
