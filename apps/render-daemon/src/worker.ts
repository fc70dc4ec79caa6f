import type { Logger } from "@site/config";
import {
  AppError,
  addLibraryFile,
  beginRenderTry,
  captureKey,
  captureSettingsHash,
  completeRender,
  failRender,
  getScreenshotProject,
  loadBrowserSession,
  type MediaContext,
  type RenderOptions,
  type ScreenshotProject,
  type StoredCapture,
  saveProjectVariant,
  setRenderStage,
  type Variant,
} from "@site/domain";
import { type Job, JobTimeoutError, PermanentJobError } from "@site/queue";
import type { RenderMetrics, Stage } from "./metrics.ts";
import type { Capture, CaptureSettings, RenderPipeline } from "./pipeline.ts";

/** What a render worker uses. */
export type WorkerDeps = { ctx: MediaContext; pipeline: RenderPipeline; metrics: RenderMetrics; log: Logger };

async function readBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function isPermanent(err: unknown): boolean {
  if (err instanceof PermanentJobError) return true;
  if (err instanceof AppError) return err.status < 500;
  return (err as { permanent?: unknown })?.permanent === true;
}

/** The message a failed render shows: ours, never a stack or a server path. */
function publicMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/\/[\w./-]+/g, (p) => (p.startsWith("//") ? p : "…")).slice(0, 300) || "render failed";
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

/** Builds the job handler: film once (or reuse the stored capture), compose, store, mark done or failed. */
export function createRenderHandler(deps: WorkerDeps) {
  const { ctx, pipeline, metrics } = deps;
  const timed = async <T>(renderId: string, stage: Stage, work: () => Promise<T>): Promise<T> => {
    await setRenderStage(ctx, renderId, stage);
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      metrics.observe(stage, (performance.now() - t0) / 1000);
    }
  };

  return async function handleRenderJob(job: Job<"render-screenshot">): Promise<void> {
    const renderId = job.data.renderId;
    const log = deps.log.child({ jobId: job.id, attempt: job.attempt });
    const render = await beginRenderTry(ctx, renderId);
    if (!render) {
      log.info("render is no longer pending; nothing to do");
      return;
    }
    try {
      const opts = render.options as RenderOptions;
      const project = render.projectId ? await getScreenshotProject(ctx, render.projectId) : null;
      if (!project) throw new PermanentJobError("the screenshot project no longer exists");
      const hash = captureSettingsHash(render.sourceUrl, opts.capture);
      const plan = planVariants(opts, project, hash);
      const session = await loadBrowserSession(ctx, render.siteId);
      const settings = (theme: Variant): CaptureSettings => ({
        url: render.sourceUrl,
        ...opts.capture,
        theme,
        cookies: session?.cookies,
        localStorage: session?.localStorage,
      });

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
        const cap = await pipeline.film(settings(v));
        const kept = keep(v, cap);
        kept.catch(() => {});
        keeping.push(kept);
        captures.set(v, cap);
      };
      let capture = await timed(renderId, "film", async () => {
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
        capture = await timed(renderId, "film", async () => {
          await filmAndKeep(plan.frame);
          return captures.get(plan.frame) as Capture;
        });
      }
      log.debug("capture ready", { filmed: plan.film, frame: plan.frame });

      const host = new URL(capture.finalUrl || render.sourceUrl).host;
      const cap = capture;
      const frame = await timed(renderId, "compose", () =>
        pipeline.compose(cap, {
          styleId: opts.look.styleId,
          framing: opts.look.framing ?? undefined,
          chrome: opts.look.chrome ?? undefined,
          theme: plan.frame,
          host,
        }),
      );
      const entry = await timed(renderId, "store", () =>
        addLibraryFile(ctx, {
          siteId: render.siteId,
          bytes: frame.bytes,
          source: "screenshot",
          alt: `Screenshot of ${host}`,
          baseName: `screenshot-${host}`,
        }),
      );
      await Promise.all(keeping);
      const done = await completeRender(ctx, renderId, {
        imageKey: entry.key,
        width: entry.width ?? frame.width,
        height: entry.height ?? frame.height,
        warnings: cap.warnings,
      });
      metrics.outcome("done");
      log.info("render done", { done, width: frame.width, height: frame.height });
    } catch (err) {
      if (job.signal.aborted && !(job.signal.reason instanceof JobTimeoutError)) {
        // Handed back at shutdown: another daemon runs it again.
        metrics.outcome("retried");
        throw err;
      }
      const final = isPermanent(err) || job.attempt >= job.attempts;
      log.warn(final ? "render failed for good" : "render try failed; will retry", { cause: String(err) });
      if (!final) {
        metrics.outcome("retried");
        throw err;
      }
      await failRender(ctx, renderId, publicMessage(err));
      metrics.outcome("failed");
      throw new PermanentJobError(publicMessage(err));
    }
  };
}
