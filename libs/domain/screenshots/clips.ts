import { findBrowser } from "@site/browser";
import { screenshotRenders, socialMedia, type Tx } from "@site/db";
import { AppError, debitCredits, type InWork, isUuid, notFound, type Principal } from "@site/domain/core";
import { chargeOrgStorage, lockOrg, type MediaContext } from "@site/domain/media";
import { socialKey } from "@site/domain/social";
import { and, eq } from "drizzle-orm";
import type { ClipMotion, ClipQueueAnswer, ClipRequestBody, ClipView } from "./clip_models.ts";
import { clipView } from "./event_views.ts";
import { findFfmpeg } from "./ffmpeg.ts";
import { type CaptureOptions, DEFAULT_CAPTURE_EXTRAS } from "./options.ts";
import { RenderTryLostError } from "./render_tries.ts";
import { completeRenderIn, dispatchQueued, insertPendingRender, type RenderContext } from "./renders.ts";
import { parsePublicPageUrl } from "./source_url.ts";
import { resolveStyle } from "./styles.ts";

/** What a clip renders: the output and its motion. */
export type ClipSpec = {
  motion: ClipMotion;
  durationS: number;
  fps: 24 | 30 | 60;
  width: number;
  height: number;
};

/** A clip render's stored options: the look, the capture settings and the clip itself. */
export type ClipOptions = {
  look: { styleId: string | null; theme: "light" | "dark" };
  capture: CaptureOptions;
  clip: ClipSpec;
};

/** The clip a body asks for, its defaults filled in (1080×1350 portrait, 6 s, 30 fps). */
export function clipSpecOf(
  body: Pick<ClipRequestBody, "motion" | "durationS" | "fps" | "width" | "height">,
): ClipSpec {
  return {
    motion: body.motion,
    durationS: body.durationS ?? 6,
    fps: body.fps ?? 30,
    width: body.width ?? 1080,
    height: body.height ?? 1350,
  };
}

/**
 * Queues a device clip (CONTRACT "Device clips"): the page URL (400), the style (404), a free estimate
 * (200); 501 without Chromium or FFmpeg before charging; then in ONE transaction CLIP_CREDITS are debited
 * (402 when short), the clip is written as a pending render of kind `clip` of the organization and
 * admitted with its organization's stills (0470: one cap for both); after commit it is enqueued on the
 * render farm. A failed enqueue refunds and answers 503/502.
 */
export async function queueClip(
  ctx: RenderContext,
  principal: Principal,
  body: ClipRequestBody,
  inWork?: InWork<ClipQueueAnswer>,
): Promise<ClipQueueAnswer> {
  const url = parsePublicPageUrl(body.url, ctx.config.fetchAllowHosts, {
    localNetwork: ctx.config.allowLocalNetworkForDevelopment,
  });
  const style = resolveStyle(body.styleId ?? null);
  if (!style)
    throw new AppError("NOT_FOUND", `styleId: no screenshot style "${body.styleId}"`, [
      { field: "styleId", message: "unknown style" },
    ]);
  const credits = ctx.config.clipCredits;
  if (body.estimateOnly) return { estimate: true, credits };
  if (!findBrowser(ctx.config.chromiumPath))
    throw new AppError("NOT_CONFIGURED", "device clips are not configured on this server (no Chromium)");
  if (!findFfmpeg(ctx.config.ffmpegPath))
    throw new AppError("NOT_CONFIGURED", "device clips are not configured on this server (no FFmpeg)");
  const viewport = style.look.viewport ?? { width: 1440, height: 900, deviceScaleFactor: 1 };
  const options: ClipOptions = {
    look: { styleId: body.styleId ?? null, theme: body.theme ?? "light" },
    capture: {
      viewportWidth: body.viewportWidth ?? viewport.width,
      viewportHeight: body.viewportHeight ?? viewport.height,
      deviceScaleFactor: viewport.deviceScaleFactor,
      fullPage: true,
      ...DEFAULT_CAPTURE_EXTRAS,
      ...(body.hideSelectors !== undefined && { hideSelectors: body.hideSelectors.map((s) => s.trim()) }),
      ...(body.waitForSelector !== undefined && { waitForSelector: body.waitForSelector.trim() || null }),
      ...(body.delayMs !== undefined && { delayMs: body.delayMs }),
      ...(body.blockAds !== undefined && { blockAds: body.blockAds }),
      ...(body.hideCookieBanners !== undefined && { hideCookieBanners: body.hideCookieBanners }),
    },
    clip: clipSpecOf(body),
  };
  const { clipId, admitted } = await ctx.db.transaction(async (tx) => {
    await debitCredits(tx, principal.orgId, credits, `a device clip costs ${credits}`);
    const { id, admitted } = await insertPendingRender(
      ctx,
      tx,
      { kind: "clip", siteId: null, orgId: principal.orgId, sourceUrl: url, options, credits },
      "clip_debit",
    );
    // The request's answer commits with the charge (decision 1411).
    await inWork?.(tx, { clipId: id, status: "pending", credits });
    return { clipId: id, admitted };
  });
  await dispatchQueued(ctx, clipId, admitted);
  return { clipId, status: "pending", credits };
}

/** A clip of the caller's organization as the API answers it; 404 for an unknown clip or another's. */
export async function getClip(ctx: MediaContext, principal: Principal, clipId: string): Promise<ClipView> {
  if (!isUuid(clipId)) throw notFound("clip");
  const [row] = await ctx.db
    .select()
    .from(screenshotRenders)
    .where(
      and(
        eq(screenshotRenders.id, clipId),
        eq(screenshotRenders.kind, "clip"),
        eq(screenshotRenders.orgId, principal.orgId),
      ),
    )
    .limit(1);
  if (!row) throw notFound("clip");
  return clipView(ctx, ctx.db, row);
}

/**
 * Lists a finished clip in the organization's social media library: the MP4 (kind `video`, with its
 * width and height) and its poster (a hidden `derived` JPEG, served to members like the video), stored
 * first, then counted against the storage quota in the transaction that lists them. Any failure (a
 * write refused, the quota) deletes whatever bytes this try wrote, and so does `commitWith` throwing (a
 * late try, decision 1440: its clip is neither listed nor counted). Returns the video's media id and the
 * poster's key.
 */
export async function addClipToLibrary(
  ctx: MediaContext,
  orgId: string,
  clip: { video: Uint8Array; poster: Uint8Array; width: number; height: number; baseName: string },
  commitWith?: (tx: Tx, entry: ClipEntry) => Promise<void>,
): Promise<ClipEntry> {
  const stem = `${clip.baseName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)}-${Date.now().toString(36)}${crypto.randomUUID().slice(0, 8)}`;
  const videoKey = socialKey(orgId, `${stem}.mp4`);
  const posterKey = socialKey(orgId, `${stem}-poster.jpg`);
  try {
    // Inside the try: a poster refused after the MP4 landed (the store filled between the two writes)
    // removes the MP4 too (issue 38, decision 1421); the orphan walk catches what a killed process left.
    await ctx.store.put(videoKey, clip.video, { contentType: "video/mp4" });
    await ctx.store.put(posterKey, clip.poster, { contentType: "image/jpeg" });
    const mediaId = await ctx.db.transaction(async (tx) => {
      await chargeOrgStorage(tx, await lockOrg(tx, orgId), clip.video.byteLength + clip.poster.byteLength);
      const now = ctx.clock.now();
      const common = {
        orgId,
        status: "ready" as const,
        width: clip.width,
        height: clip.height,
        createdAt: now,
      };
      const rows = await tx
        .insert(socialMedia)
        .values([
          {
            ...common,
            key: videoKey,
            kind: "video",
            contentType: "video/mp4",
            size: clip.video.byteLength,
            source: "generated",
          },
          {
            ...common,
            key: posterKey,
            kind: "image",
            contentType: "image/jpeg",
            size: clip.poster.byteLength,
            source: "derived",
          },
        ])
        .returning({ id: socialMedia.id, key: socialMedia.key });
      const id = rows.find((r) => r.key === videoKey)!.id;
      await commitWith?.(tx, { mediaId: id, videoKey, posterKey });
      return id;
    });
    return { mediaId, videoKey, posterKey };
  } catch (err) {
    await ctx.store.delete(videoKey).catch(() => {});
    await ctx.store.delete(posterKey).catch(() => {});
    throw err;
  }
}

/** A clip's entry in the social library: the video's media id, its key and its poster's. */
export type ClipEntry = { mediaId: string; videoKey: string; posterKey: string };

/**
 * Inside the transaction that lists the clip (addClipToLibrary's `commitWith`): marks it done with its
 * library entry when `tryToken` still owns it, and admits its organization's next waiting render
 * (returned, to enqueue after commit); throws RenderTryLostError otherwise, which rolls the listing back
 * and deletes the clip's bytes (decision 1440).
 */
export async function completeClipIn(
  ctx: RenderContext,
  tx: Tx,
  clipId: string,
  result: ClipEntry & { width: number; height: number; warnings: string[] },
  tryToken?: string,
): Promise<string[]> {
  const { videoKey, ...rest } = result;
  const admitted = await completeRenderIn(ctx, tx, clipId, { ...rest, imageKey: videoKey }, tryToken);
  if (admitted === null) throw new RenderTryLostError(clipId);
  return admitted;
}
