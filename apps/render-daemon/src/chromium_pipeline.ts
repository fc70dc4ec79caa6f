import {
  addressCheckFor,
  createBrowserPool,
  createUrlGuard,
  findBrowser,
  findFilmBrowser,
  PageDeadlineError,
} from "@site/browser";
import type { Config, Logger } from "@site/config";
import { findFfmpeg, listStyles } from "@site/domain/screenshots";
import { PermanentJobError } from "@site/queue";
import type { ObjectStore } from "@site/storage";
import { type EncoderKind, pickEncoder } from "./clip/encoder.ts";
import { renderClip } from "./clip/render_clip.ts";
import { type Compositor, createCompositor, type WarmLook } from "./compose/compositor.ts";
import { armPage, DEFAULT_TIMINGS, filmPage, warmPage } from "./film/capture.ts";
import type { RenderPipeline } from "./render_types.ts";

/**
 * The Chromium pipeline: the daemon's `RenderPipeline` plus the compositor it composes with (plates,
 * the fast path's pixels and the 3D reference), which tests and benches measure directly. The daemon
 * sees only `RenderPipeline`; the compositor is no member of that product type.
 */
export type ChromiumPipeline = RenderPipeline & { compositor: Compositor };

/** Builds the pipeline: a Chromium pool for filming and a warm compositor page. */
export async function createPipeline(opts: {
  config: Config;
  log: Logger;
  store?: ObjectStore | null;
  warm?: boolean;
}): Promise<ChromiumPipeline> {
  const { config, log } = opts;
  const executablePath = findBrowser(config.chromiumPath);
  if (!executablePath) throw new Error("no Chromium found (set CHROMIUM_PATH or install chromium)");
  // Films on a CPU host use the headless shell beside Chromium when there is one: a third less CPU per
  // page (decision 1214). The compositor (WebGL plates) keeps Chromium itself.
  const filmExecutable = findFilmBrowser(config) ?? executablePath;
  log.info("filming with", { executable: filmExecutable });
  const pool = createBrowserPool({
    executablePath: filmExecutable,
    gpu: config.renderGpu,
    allowHosts: config.fetchAllowHosts,
    localNetwork: config.allowLocalNetworkForDevelopment,
    extraCaFile: config.extraCaFile,
    concurrency: config.renderConcurrency,
    // each spare page is armed while the film before it runs: guard, settling probe, autoconsent
    prepare: (page) => armPage(page),
    log,
  });
  const compositor = await createCompositor({
    executablePath,
    gpu: config.renderGpu,
    log,
    store: opts.store,
    redisUrl: config.redisUrl,
    redisPrefix: config.queuePrefix,
  });
  // Renders in flight (film, compose, clip): warming waits while there are any (decision 1505).
  let inFlight = 0;
  const counted = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await work();
    } finally {
      inFlight--;
    }
  };
  const startedAt = performance.now();
  let firstFrame = true;
  // Says whether this host drew any plate before its first frame: a host started beside a warm farm
  // loads them from the store and draws none (CONTRACT "Many render hosts on one database").
  const sayFirstFrame = () => {
    firstFrame = false;
    const s = compositor.plates.stats;
    log.info(
      s.built === 0
        ? "first frame composed: no plate built on this host (plates from the store)"
        : `first frame composed: ${s.built} plate(s) built on this host`,
      { msSinceStart: Math.round(performance.now() - startedAt), ...s },
    );
  };
  let warming: Promise<void> = Promise.resolve();
  let encoder: Promise<EncoderKind> | null = null;
  if (opts.warm !== false) {
    // The featured styles' plates at the default viewport (1440×900), light first: a first render of
    // them is then a warp, not a 3D draw. In the background: jobs are taken meanwhile.
    const featured = listStyles({ featured: true }).map((s) => s.id);
    const looks: WarmLook[] = (["light", "dark"] as const).flatMap((theme) =>
      featured.map((styleId) => ({ styleId, theme, captureWidth: 1440, captureHeight: 900 })),
    );
    const t0 = performance.now();
    // the filming browsers launched now, one after another, each one's first frame drawn (the first
    // screenshot of a browser sets up its compositing: seconds on SwiftShader) and its next page armed,
    // rather than by the first renders (the first slot is ready to film while the next one warms)
    const filmWarm = pool
      .warmAll((page) => warmPage(page))
      .then(() => pool.ready())
      .catch(() => {});
    warming = compositor
      .warm(looks, { busy: () => inFlight > 0 })
      .then(() =>
        log.info("plates warmed", {
          looks: looks.length,
          ms: Math.round(performance.now() - t0),
          ...compositor.plates.stats,
        }),
      )
      .catch((err) => log.warn("warming plates failed", { cause: String(err) }))
      .then(() => filmWarm);
  }
  return {
    film: (s, limits) =>
      counted(() =>
        pool
          .withPage(
            (page, context, armed) =>
              filmPage(
                page,
                context,
                s,
                createUrlGuard({ isBlocked: addressCheckFor(config), allowHosts: config.fetchAllowHosts }),
                DEFAULT_TIMINGS,
                armed,
                limits?.early,
              ),
            limits,
          )
          .catch((err) => {
            if (!(err instanceof PageDeadlineError)) throw err;
            // The page's own behaviour: not a transient fault, so not retried (0471).
            throw new PermanentJobError(
              `the page did not finish loading within ${Math.round(config.renderPageDeadlineMs / 1000)} s ` +
                "(it stopped responding or loads too slowly); it was stopped and is not retried",
            );
          }),
      ),
    compose: (c, look) =>
      counted(async () => {
        const frame = await compositor.compose(c, look);
        if (firstFrame) sayFirstFrame();
        return frame;
      }),
    clip: (c, look, spec, signal) =>
      counted(async () => {
        const ffmpeg = findFfmpeg(config.ffmpegPath);
        // Cannot succeed however often it is retried (the API answers 501 on such hosts).
        if (!ffmpeg)
          throw new PermanentJobError("device clips need FFmpeg, which this render host does not have");
        encoder ??= pickEncoder(ffmpeg, config.renderGpu, log);
        return renderClip({ compositor, ffmpeg, encoder: await encoder }, c, look, spec, signal);
      }),
    compositor,
    warmed: () => warming,
    close: async () => {
      // warming stops at its next look; a plate being drawn finishes first
      await Promise.all([pool.close(), compositor.close()]);
      await warming;
    },
  };
}
