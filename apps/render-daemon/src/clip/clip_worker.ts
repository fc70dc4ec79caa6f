// The render worker's clip path: film once, make the clip, list it in the social library (1220).
import type { Logger } from "@site/config";
import { AppError } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import {
  addClipToLibrary,
  type ClipOptions,
  completeClipIn,
  enqueueAdmitted,
  type RenderContext,
  RenderTryLostError,
} from "@site/domain/screenshots";
import { PermanentJobError } from "@site/queue";
import type { Stage } from "../render_metrics.ts";
import type { RenderPipeline } from "../render_types.ts";

/** A clip films this many screens of the page (viewport heights) at most: what it can scroll through. */
export const CLIP_SCREENS = 4;

/** The clip render row the worker took (a screenshot_renders row of kind clip). */
type ClipRow = { id: string; orgId: string; sourceUrl: string; options: unknown; tryToken: string };

/**
 * Runs one try of a clip: the page filmed once (the screenshot guard, settling and capture options, a
 * full-page capture bounded at CLIP_SCREENS viewports, within RENDER_PAGE_DEADLINE_MS), the clip made,
 * the MP4 and poster listed in the organization's social library, the clip marked done. Throws like the
 * still path: the caller retries or fails it with its refund.
 */
export async function runClip(
  deps: { ctx: MediaContext & RenderContext; pipeline: RenderPipeline; log: Logger },
  render: ClipRow,
  signal: AbortSignal,
  timed: <T>(stage: Stage, work: () => Promise<T>) => Promise<T>,
  stageWrites: () => Promise<void>,
): Promise<void> {
  const { ctx, pipeline } = deps;
  const opts = render.options as ClipOptions;
  const t0 = performance.now();
  const capture = await timed("film", () =>
    pipeline.film(
      {
        url: render.sourceUrl,
        ...opts.capture,
        fullPage: true,
        maxHeight: opts.capture.viewportHeight * CLIP_SCREENS,
        theme: opts.look.theme,
      },
      { deadline: Date.now() + ctx.config.renderPageDeadlineMs, signal },
    ),
  );
  const t1 = performance.now();
  const host = new URL(capture.finalUrl || render.sourceUrl).host;
  const out = await timed("compose", () =>
    pipeline.clip(
      capture,
      { styleId: opts.look.styleId, theme: opts.look.theme, host },
      {
        ...opts.clip,
        windowHeight: Math.round(opts.capture.viewportHeight * opts.capture.deviceScaleFactor),
      },
      signal,
    ),
  );
  const t2 = performance.now();
  // Listed and marked done in one transaction, only while this try owns the clip (decision 1440): a
  // late host (woken from a freeze after another finished it) lists nothing and its bytes are deleted.
  let admitted: string[] = [];
  const listed = await timed("store", () =>
    addClipToLibrary(
      ctx,
      render.orgId,
      {
        video: out.video,
        poster: out.poster,
        width: out.width,
        height: out.height,
        baseName: `clip-${host}`,
      },
      async (tx, entry) => {
        await stageWrites();
        admitted = await completeClipIn(
          ctx,
          tx,
          render.id,
          {
            ...entry,
            width: out.width,
            height: out.height,
            warnings: [...capture.warnings, ...out.warnings],
          },
          render.tryToken,
        );
      },
    ).then(
      () => true,
      (err) => {
        if (err instanceof RenderTryLostError) return false;
        // the library refusing the file (storage quota) is a rule, not a fault: trying again cannot help
        if (err instanceof AppError) throw new PermanentJobError(err.message, { cause: err });
        throw err;
      },
    ),
  );
  const t3 = performance.now();
  await enqueueAdmitted(ctx, admitted);
  const t4 = performance.now();
  // where a clip's time went (ms), after it is done: the bench reads this line (scripts/bench/clip.ts)
  deps.log.info("clip made", {
    clipId: render.id,
    listed,
    bytes: out.video.byteLength,
    ...out.timings,
    film: t1 - t0,
    compose: t2 - t1,
    store: t3 - t2,
    db: t4 - t3,
    job: t4 - t0,
  });
  if (!listed)
    deps.log.warn(
      "this try no longer owns the clip (another host finished or took it); what it stored was removed",
      {
        clipId: render.id,
      },
    );
}
