import type { Logger } from "@site/config";
import { AppError, publicFailureMessage } from "@site/domain/core";
import { addLibraryFile, type CommitWith, type MediaContext } from "@site/domain/media";
import {
  beginRenderTry,
  captureKey,
  captureSettingsHash,
  completeRenderIn,
  enqueueAdmitted,
  failRender,
  getScreenshotProject,
  loadBrowserSession,
  RENDER_TRIES,
  type RenderContext,
  type RenderOptions,
  RenderTryLostError,
  releaseRenderTry,
  type ScreenshotProject,
  type StoredCapture,
  saveProjectVariant,
  setRenderStage,
  startRenderHeartbeat,
  type Variant,
} from "@site/domain/screenshots";
import { type Job, JobTimeoutError, PermanentJobError } from "@site/queue";
import { runClip } from "./clip/clip_worker.ts";
import type { RenderMetrics, Stage } from "./render_metrics.ts";
import type { Capture, CaptureSettings, Composed, RenderPipeline } from "./render_types.ts";

/** What a render worker uses. */
export type WorkerDeps = {
  ctx: MediaContext & RenderContext;
  pipeline: RenderPipeline;
  metrics: RenderMetrics;
  log: Logger;
};

async function readBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The message a failed render shows: a sentence for users, never an errno, a stack or a server path. */
function publicMessage(err: unknown): string {
  return publicFailureMessage(err, "The render failed; the credits were refunded.");
}

/** Which variants this render films, and which one it frames (see decision 0402). */
export function planVariants(
  opts: RenderOptions,
  project: Pick<ScreenshotProject, "variants">,
  hash: string,
): { frame: Variant; film: Variant[] } {
  const frame: Variant = opts.look.theme ?? project.variants.first ?? "light";
  const wanted: Variant[] = opts.look.theme ? [frame, frame === "light" ? "dark" : "light"] : [frame];
  const film = wanted.filter((v) => {
    const stored = project.variants[v];
    return opts.recapture || !stored || stored.settingsHash !== hash;
  });
  return { frame, film };
}

/** The render row a try took (beginRenderTry's answer). */
type RenderRow = NonNullable<Awaited<ReturnType<typeof beginRenderTry>>>;

/**
 * Runs a stage's work, timed into the metrics, its stage shown to polls unless `show` is false (work
 * already done: a write for a stage no poll could see is a transaction for nothing).
 */
type Timed = <T>(stage: Stage, work: () => Promise<T>, opts?: { show?: boolean }) => Promise<T>;

/**
 * The stage a poll shows, written beside the work, not before it (a round trip per stage), and only
 * when it changes (beginRenderTry set "film"): the writes run one after another, in order; `written()`
 * is awaited before the render is done or released, since a stage written after that would mark it
 * active again. A stage write that fails does not fail the render (1507).
 */
function stageTimer(
  deps: WorkerDeps,
  renderId: string,
  tryToken: string,
): { timed: Timed; written: () => Promise<void> } {
  let stageWrites: Promise<void> = Promise.resolve();
  let shownStage: Stage = "film";
  const timed: Timed = async (stage, work, opts) => {
    if (stage !== shownStage && opts?.show !== false) {
      shownStage = stage;
      // Only what polls show: a write that fails is logged, and the render goes on (decision 1507).
      stageWrites = stageWrites
        .then(() => setRenderStage(deps.ctx, renderId, stage, tryToken))
        .catch((err) => deps.log.warn("render stage not written; the render goes on", { stage, cause: err }));
    }
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      deps.metrics.observe(stage, (performance.now() - t0) / 1000);
    }
  };
  return { timed, written: () => stageWrites };
}

/** An early shot (FilmLimits.early) and its frame being composed; `ready` once composed. */
type EarlyFrame = { capture: Capture; frame: Promise<Composed>; ready: boolean };

/** A screenshot's capture, the variant it frames, and the writes that keep fresh captures on its project. */
type Filmed = { capture: Capture; frame: Variant; keeping: Promise<void>[] };

/**
 * The film step of a screenshot: films the variants the plan needs (0402) under one deadline for all
 * of them (0471; a shutdown gives the page up), keeping each capture on the project while composing
 * goes on; reuses the stored capture of the framed variant, filming it again when its bytes are gone.
 */
async function filmScreenshot(
  deps: WorkerDeps,
  render: RenderRow,
  opts: {
    siteId: string;
    signal: AbortSignal;
    timed: Timed;
    log: Logger;
    /** Told of the framed variant's early shot (FilmLimits.early), when it is the only one filmed. */
    early?: (c: Capture, frame: Variant) => void;
  },
): Promise<Filmed> {
  const { ctx, pipeline } = deps;
  const { siteId } = opts;
  const options = render.options as RenderOptions;
  // two reads of their own: side by side
  const [project, session] = await Promise.all([
    render.projectId ? getScreenshotProject(ctx, render.projectId) : null,
    loadBrowserSession(ctx, siteId),
  ]);
  if (!project) throw new PermanentJobError("the screenshot project no longer exists");
  const hash = captureSettingsHash(render.sourceUrl, options.capture);
  const plan = planVariants(options, project, hash);
  const settings = (theme: Variant): CaptureSettings => ({
    url: render.sourceUrl,
    ...options.capture,
    theme,
    cookies: session?.cookies,
    localStorage: session?.localStorage,
  });
  let filmStart = Date.now();
  const captures = new Map<Variant, Capture>();
  // Captures are kept on the project while composing goes on; awaited before the render is done.
  const keeping: Promise<void>[] = [];
  const keep = async (v: Variant, cap: Capture) => {
    const key = captureKey(project.id, v, hash);
    await ctx.store.put(key, cap.png, { contentType: "image/png" });
    const stored: StoredCapture = {
      key,
      settingsHash: hash,
      width: cap.width,
      height: cap.height,
      finalUrl: cap.finalUrl,
      warnings: cap.warnings,
      filmedAt: ctx.clock.now().toISOString(),
    };
    await saveProjectVariant(ctx, project.id, v, stored);
  };
  const filmAndKeep = async (v: Variant) => {
    const early = opts.early;
    const cap = await pipeline.film(settings(v), {
      deadline: filmStart + ctx.config.renderPageDeadlineMs,
      signal: opts.signal,
      // only a film whose capture is framed and the last to be filmed: nothing waits behind it
      early: early && plan.film.length === 1 && v === plan.frame ? (c) => early(c, v) : undefined,
    });
    const kept = keep(v, cap);
    kept.catch(() => {});
    keeping.push(kept);
    captures.set(v, cap);
  };
  let capture = await opts.timed("film", async () => {
    filmStart = Date.now();
    for (const v of plan.film) await filmAndKeep(v);
    const filmed = captures.get(plan.frame);
    if (filmed) return filmed;
    const stored = project.variants[plan.frame] as StoredCapture;
    const object = await ctx.store.get(stored.key);
    if (!object) return null;
    return {
      png: await readBytes(object.body),
      width: stored.width,
      height: stored.height,
      finalUrl: stored.finalUrl,
      warnings: stored.warnings,
    } satisfies Capture;
  });
  if (!capture) {
    // The stored capture's bytes are gone: film again.
    capture = await opts.timed("film", async () => {
      filmStart = Date.now();
      await filmAndKeep(plan.frame);
      return captures.get(plan.frame) as Capture;
    });
  }
  opts.log.debug("capture ready", { filmed: plan.film, frame: plan.frame });
  return { capture, frame: plan.frame, keeping };
}

/**
 * The store step: the frame listed in the site's library, in one transaction with `commitWith` (the
 * render's completion by its owning try), once `before` (the captures being kept) is done: the frame's
 * bytes are written meanwhile. A refusal (storage quota) is final.
 */
function storeFrame(
  deps: WorkerDeps,
  siteId: string,
  frame: { bytes: Uint8Array },
  host: string,
  before: Promise<unknown>,
  commitWith: CommitWith,
): ReturnType<typeof addLibraryFile> {
  return addLibraryFile(
    deps.ctx,
    {
      siteId,
      bytes: frame.bytes,
      source: "screenshot",
      alt: `Screenshot of ${host}`,
      baseName: `screenshot-${host}`,
    },
    { commitWith, before },
  ).catch((err) => {
    // The library refusing the file (storage quota) is a rule, not a fault: trying again cannot help.
    if (err instanceof AppError) throw new PermanentJobError(err.message, { cause: err });
    throw err;
  });
}

/**
 * Decides what a failed try means and returns the error the queue gets: handed back at shutdown (the
 * try does not count, 18.5), retried (the catalog's attempts, counted on the render across re-enqueued
 * jobs, 0009), or failed for good with its refund and a sentence for users.
 */
async function classifyFailure(
  deps: WorkerDeps,
  job: Job<"render-screenshot">,
  render: RenderRow,
  opts: { err: unknown; log: Logger },
): Promise<unknown> {
  const { ctx, metrics } = deps;
  const { err, log } = opts;
  if (job.signal.aborted && !(job.signal.reason instanceof JobTimeoutError)) {
    // Handed back at shutdown: another daemon runs it again, and this try does not count (18.5).
    await releaseRenderTry(ctx, render.id, render.tryToken).catch(() => {});
    metrics.outcome("retried");
    return err;
  }
  const final =
    err instanceof PermanentJobError || render.attempts >= RENDER_TRIES || job.attempt >= job.attempts;
  log.warn(final ? "render failed for good" : "render try failed; will retry", { cause: err });
  if (!final) {
    metrics.outcome("retried");
    return err;
  }
  // Only while this try owns the render: a late host's failure fails nothing (decision 1440).
  if (await failRender(ctx, render.id, publicMessage(err), render.tryToken)) metrics.refund();
  metrics.outcome("failed");
  return new PermanentJobError(publicMessage(err));
}

/** Builds the job handler: film once (or reuse the stored capture), compose, store, mark done or failed. */
export function createRenderHandler(deps: WorkerDeps) {
  const { ctx, pipeline, metrics } = deps;
  return async function handleRenderJob(job: Job<"render-screenshot">): Promise<void> {
    const renderId = job.data.renderId;
    const log = deps.log.child({ jobId: job.id, attempt: job.attempt });
    const tookAt = performance.now();
    const render = await beginRenderTry(ctx, renderId);
    if (!render) {
      log.info("render is no longer pending; nothing to do");
      return;
    }
    const { timed, written } = stageTimer(deps, renderId, render.tryToken);
    // A live host's renders are not re-queued by the sweeper while their jobs are lost (decision 1441).
    const stopBeating = startRenderHeartbeat(ctx, renderId, render.tryToken);
    try {
      if (render.kind === "clip") {
        await runClip({ ctx, pipeline, log }, render, job.signal, timed, written);
      } else {
        const siteId = render.siteId;
        if (!siteId) throw new PermanentJobError("a screenshot render without a site");
        const look = (render.options as RenderOptions).look;
        const hostOf = (c: Capture) => new URL(c.finalUrl || render.sourceUrl).host;
        const composeLook = (c: Capture, theme: Variant) =>
          pipeline.compose(c, {
            styleId: look.styleId,
            framing: look.framing ?? undefined,
            chrome: look.chrome ?? undefined,
            theme,
            host: hostOf(c),
          });
        // An early shot is composed while its quiet window runs; kept when the film ends with that shot.
        let early: EarlyFrame | null = null;
        const {
          capture,
          frame: theme,
          keeping,
        } = await filmScreenshot(deps, render, {
          siteId,
          signal: job.signal,
          timed,
          log,
          early: (c, v) => {
            const frame = composeLook(c, v);
            const composing = { capture: c, frame, ready: false };
            frame.then(
              () => {
                composing.ready = true;
              },
              () => {},
            );
            early = composing;
          },
        });
        const host = hostOf(capture);
        const ahead = early as EarlyFrame | null; // assigned in the film's callback
        const kept =
          ahead && ahead.capture.png === capture.png && hostOf(ahead.capture) === host ? ahead : null;
        // a frame composed while the film ran shows no "compose" stage: straight from film to store
        const frame = await timed("compose", () => (kept ? kept.frame : composeLook(capture, theme)), {
          show: !kept?.ready,
        });
        // Listed and marked done in one transaction, only while this try owns the render (1440); the
        // frame is stored while the captures are still being kept, which the render waits for before
        // it is done (one that fails fails the try, and what was stored is removed)
        let admitted: string[] = [];
        const captured = Promise.all(keeping);
        captured.catch(() => {}); // awaited by the store step
        const done = await timed("store", () =>
          storeFrame(deps, siteId, frame, host, captured, async (tx, entry) => {
            await written();
            const ended = await completeRenderIn(
              ctx,
              tx,
              renderId,
              {
                imageKey: entry.key,
                width: entry.width ?? frame.width,
                height: entry.height ?? frame.height,
                warnings: capture.warnings,
              },
              render.tryToken,
            );
            if (ended === null) throw new RenderTryLostError(renderId);
            admitted = ended;
          }).then(
            () => true,
            (err) => {
              if (err instanceof RenderTryLostError) return false;
              throw err;
            },
          ),
        );
        await enqueueAdmitted(ctx, admitted);
        if (done) log.info("render done", { done, width: frame.width, height: frame.height });
        else log.warn("this try no longer owns the render; what it stored was removed");
      }
      metrics.outcome("done");
      metrics.observeRender((performance.now() - tookAt) / 1000);
    } catch (err) {
      // a stage written after the render was released or failed would mark it active again
      await written().catch(() => {});
      throw await classifyFailure(deps, job, render, { err, log });
    } finally {
      stopBeating();
    }
  };
}
