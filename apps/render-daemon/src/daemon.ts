import { findBrowser, type MediaContext, type RenderContext } from "@site/domain";
import type { Consumer } from "@site/queue";
import type { Runtime } from "@site/runtime";
import { createRenderMetrics, serveMetrics } from "./metrics.ts";
import { createRenderPipeline, type RenderPipeline } from "./pipeline.ts";
import { startSweeper } from "./sweeper.ts";
import { createRenderHandler } from "./worker.ts";

/** How long SIGTERM waits for running renders before handing them back to the queue. */
const STOP_GRACE_MS = 25_000;

/** A running render daemon. */
export type RenderDaemon = { metricsUrl: string | null; stop(): Promise<void> };

/**
 * Starts the render daemon on a runtime: a warm pipeline (browser pool + compositor), a queue consumer
 * with RENDER_CONCURRENCY, the sweeper and GET /metrics on RENDER_METRICS_PORT. Without Chromium it
 * takes no jobs (the API answers 501 on such hosts).
 */
export async function startRenderDaemon(
  rt: Runtime,
  opts: { graceMs?: number; sweepEveryMs?: number } = {},
): Promise<RenderDaemon> {
  const log = rt.log.child({ app: "render-daemon" });
  const metrics = createRenderMetrics();
  const metricsServer =
    rt.config.renderMetricsPort !== null
      ? serveMetrics({ port: rt.config.renderMetricsPort, metrics, depth: () => rt.queue.depth() })
      : null;
  if (metricsServer) log.info("metrics listening", { url: metricsServer.url });
  const ctx: MediaContext & RenderContext = {
    config: rt.config,
    db: rt.db,
    clock: rt.clock,
    log,
    store: rt.store,
    queue: rt.queue,
  };
  const sweeper = startSweeper(ctx, { everyMs: opts.sweepEveryMs });

  let pipeline: RenderPipeline | null = null;
  let consumer: Consumer | null = null;
  if (!findBrowser(rt.config.chromiumPath)) {
    log.warn("no Chromium on this host: the render daemon takes no jobs (set CHROMIUM_PATH)");
  } else {
    pipeline = await createRenderPipeline({ config: rt.config, log });
    const handler = createRenderHandler({ ctx, pipeline, metrics, log });
    consumer = rt.queue.consume("render-screenshot", handler, { concurrency: rt.config.renderConcurrency });
    log.info("render daemon taking jobs", {
      concurrency: rt.config.renderConcurrency,
      queue: rt.queue.driver,
    });
  }

  let stopping: Promise<void> | null = null;
  return {
    metricsUrl: metricsServer?.url ?? null,
    stop() {
      // Order: stop taking jobs → finish or hand back running ones → close browsers → listeners.
      stopping ??= (async () => {
        log.info("render daemon stopping");
        await consumer?.close({ graceMs: opts.graceMs ?? STOP_GRACE_MS });
        await sweeper.stop();
        await pipeline?.close();
        await metricsServer?.stop();
        log.info("render daemon stopped");
      })();
      return stopping;
    },
  };
}
