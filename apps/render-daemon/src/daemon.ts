import { findBrowser, sweepOrphanBrowsers } from "@site/browser";
import type { MediaContext } from "@site/domain/media";
import { startNewsletterSender } from "@site/domain/newsletters";
import type { RenderContext } from "@site/domain/screenshots";
import { startSocialPublisher } from "@site/domain/social";
import { startWebhookDispatcher } from "@site/domain/webhooks";
import type { Consumer } from "@site/queue";
import { dependencyChecks, type Runtime, readinessProbe } from "@site/runtime";
import { createPlatformAdapters } from "@site/social";
import { sweepClipTemp } from "./clip/render_clip.ts";
import { createRenderPipeline } from "./pipeline.ts";
import { createRenderMetrics, serveMetrics } from "./render_metrics.ts";
import type { RenderPipeline } from "./render_types.ts";
import { startSweeper } from "./sweeper.ts";
import { createRenderHandler } from "./worker.ts";

/** How long SIGTERM waits for running renders before handing them back to the queue. */
const STOP_GRACE_MS = 25_000;

/** A running render daemon. */
export type RenderDaemon = {
  metricsUrl: string | null;
  /** Settles once the warm-up at start (featured plates, the film browser's first draw) is over. */
  warmed(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Starts the render daemon on a runtime: a pipeline (browser pool, and a compositor whose WebGL page
 * warms in the background while the first jobs film: 0902), a queue consumer
 * with RENDER_CONCURRENCY, the sweeper (every RENDER_SWEEP_EVERY_MS; its first pass takes back renders a
 * previous process left) and GET /metrics on RENDER_METRICS_PORT. Without Chromium it takes no jobs (the
 * API answers 501 on such hosts).
 */
export async function startRenderDaemon(
  rt: Runtime,
  opts: {
    graceMs?: number;
    sweepEveryMs?: number;
    /** `false`: no warm-up at start (featured plates, the film browser's first draw); default on. */
    warm?: boolean;
    /**
     * Test hook (decision 1503): a pipeline in place of Chromium's, e.g. the stub filmer of
     * apps/render-daemon/testing/stub_pipeline.ts that lets the farm bench run 30 daemons on 2 cores
     * with the real queue, admission, claim and completion. Refused with NODE_ENV=production.
     */
    pipeline?: RenderPipeline;
  } = {},
): Promise<RenderDaemon> {
  if (opts.pipeline && process.env.NODE_ENV === "production")
    throw new Error("a stub render pipeline is a test hook: refused with NODE_ENV=production");
  const log = rt.log.child({ app: "render-daemon" });
  // Clip folders a previous run left (SIGKILL, OOM: its partial clip.mp4), with or without Chromium.
  const cleared = sweepClipTemp();
  if (cleared.length > 0) log.info("removed temporary clip folders left by a previous run", { cleared });
  const metrics = createRenderMetrics();
  let pipeline: RenderPipeline | null = null;
  let stopping: Promise<void> | null = null;
  // /healthz and /readyz beside /metrics: database, queue, storage, and a browser to film with.
  const ready = readinessProbe(
    {
      ...dependencyChecks(rt),
      browser: async () => {
        if (!pipeline) throw new Error("no Chromium on this host");
      },
    },
    { timeoutMs: rt.config.timeouts.readyCheckMs },
  );
  const metricsServer =
    rt.config.renderMetricsPort !== null
      ? serveMetrics({
          port: rt.config.renderMetricsPort,
          metrics,
          depth: () => rt.queue.depth("render-screenshot"),
          health: {
            ready,
            retryAfterSeconds: rt.config.retryAfterSeconds,
            stopping: () => stopping !== null,
          },
        })
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
  const sweeper = startSweeper(ctx, { everyMs: opts.sweepEveryMs, onRefunded: (n) => metrics.refund(n) });
  // The daemon is the long-running worker: it sends newsletters too, with or without Chromium.
  const newsletters = await startNewsletterSender(ctx);
  // And webhook deliveries, from the outbox (decision 0841).
  const webhooks = startWebhookDispatcher(ctx, { databaseUrl: rt.listenUrl || undefined });
  // And social posts' targets, from the job queue (decision 1470).
  const social = startSocialPublisher(ctx, createPlatformAdapters(ctx));

  let consumer: Consumer | null = null;
  if (opts.pipeline) {
    pipeline = opts.pipeline;
    log.warn("render daemon filming with a stub pipeline (test hook), not Chromium");
  } else if (!findBrowser(rt.config.chromiumPath)) {
    log.warn("no Chromium on this host: the render daemon takes no jobs (set CHROMIUM_PATH)");
  } else {
    // Browsers a previous run of this daemon left (SIGKILL, OOM) are killed before new ones start.
    const swept = sweepOrphanBrowsers();
    if (swept.removed > 0) log.info("swept browsers left by a previous run", swept);
    pipeline = await createRenderPipeline({ config: rt.config, log, store: rt.store, warm: opts.warm });
  }
  if (pipeline) {
    const handler = createRenderHandler({ ctx, pipeline, metrics, log });
    consumer = rt.queue.consume("render-screenshot", handler, { concurrency: rt.config.renderConcurrency });
    log.info("render daemon taking jobs", {
      concurrency: rt.config.renderConcurrency,
      queue: rt.queue.driver,
    });
  }

  return {
    metricsUrl: metricsServer?.url ?? null,
    warmed: async () => {
      await pipeline?.warmed?.();
    },
    stop() {
      // Order: stop taking jobs → finish or hand back running ones → close browsers → listeners.
      stopping ??= (async () => {
        log.info("render daemon stopping");
        await consumer?.close({ graceMs: opts.graceMs ?? STOP_GRACE_MS });
        await sweeper.stop();
        await newsletters.stop();
        await webhooks.stop();
        await social.stop();
        await pipeline?.close();
        await metricsServer?.stop();
        log.info("render daemon stopped");
      })();
      return stopping;
    },
  };
}
