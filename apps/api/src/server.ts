import { recordServer } from "@site/config";
import { createKeyCache, errorBody } from "@site/domain/core";
import { startMediaSweeper } from "@site/domain/media";
import { type NewsletterSender, openMailer, startNewsletterSender } from "@site/domain/newsletters";
import { startRenderWaits } from "@site/domain/screenshots";
import { startSocialPublisher } from "@site/domain/social";
import { startWebhookDispatcher } from "@site/domain/webhooks";
import { openRateLimiter, type Runtime } from "@site/runtime";
import { createPlatformAdapters } from "@site/social";
import { createApiMetrics, serveApiMetrics } from "./api_metrics.ts";
import { createApp } from "./app.ts";
import { serveApp } from "./listener.ts";

/** A running API: its URL, and `stop` (graceful: see decisions 0805 and 0820). */
export type RunningApi = {
  url: string;
  /** The Prometheus GET /metrics listener's URL (API_METRICS_PORT); null when unset. */
  metricsUrl: string | null;
  /** Requests being answered right now. */
  readonly inFlight: number;
  /**
   * Stops accepting, lets requests in flight finish within `graceMs` (SHUTDOWN_GRACE_MS), answers those
   * that sent no durable write 503 with `Connection: close` (and refuses their later writes), lets those
   * that did finish, closes the sign-in WebSockets, then closes what the API opened (decision 0820).
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
};

function unavailable(message: string, retryAfterSeconds: number): Response {
  return new Response(JSON.stringify(errorBody("SERVICE_UNAVAILABLE", message, { stopping: true })), {
    status: 503,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "retry-after": String(retryAfterSeconds),
      connection: "close",
    },
  });
}

/**
 * Starts the API on the configured host and port, with its key cache and media sweeper; with the
 * in-process queue also the newsletter sender (no other process can reach that queue; decision 1103).
 */
export function startApi(rt: Runtime): RunningApi {
  // Verified keys are cached in process; revocations arrive through LISTEN/NOTIFY (decision 0802).
  const keys =
    rt.keys ??
    (rt.config.apiKeyCacheTtlMs > 0 && rt.listenUrl
      ? createKeyCache({ databaseUrl: rt.listenUrl, ttlMs: rt.config.apiKeyCacheTtlMs, log: rt.log })
      : undefined);
  // Per-key request limits, shared through Redis when it is configured (decision 0804); off unless set.
  const limiter = rt.limiter ?? openRateLimiter(rt.config, rt.log);
  // A long template clone lifts the idle timeout of its own request (the listener is made below).
  const mailer = openMailer(rt.config, rt.log);
  // One LISTEN for every waiter on a render or clip (waitSeconds), none without a database URL.
  // LISTEN needs the direct connection, not a transaction-mode pooler (decision 1501).
  const renderWaits = rt.listenUrl ? startRenderWaits(rt.listenUrl) : undefined;
  const deps = {
    ...rt,
    keys,
    limiter,
    mailer,
    renderWaits,
    liftTimeout: (request: Request) => server.timeout(request, 0),
    // Answers by route template, the pool, the event loop: GET /metrics on its own port (decision 0711).
    metrics:
      rt.config.apiMetricsPort === null ? undefined : createApiMetrics({ db: rt.db, poolMax: rt.dbPoolMax }),
  };
  const app = createApp(deps);
  const log = rt.log.child({ app: "api" });
  // Uploads settle when they land; this pass catches those whose client never said so (decision 0803).
  const sweeper = startMediaSweeper(deps, {
    everyMs: rt.config.mediaSweepEveryMs,
    orphanEveryMs: rt.config.mediaOrphans.everyMs,
    orphanGraceMs: rt.config.mediaOrphans.graceMs,
  });
  // Webhook deliveries: any API or daemon process sends them from the outbox (decision 0841).
  const webhooks = startWebhookDispatcher(rt, { databaseUrl: rt.listenUrl || undefined });
  // Social targets: any API or daemon process publishes them from the job queue (decision 1470).
  const social = startSocialPublisher(deps, createPlatformAdapters(deps));
  let sender: Promise<NewsletterSender> | null = null;
  if (rt.queue.driver === "memory")
    sender = startNewsletterSender(rt, { mailer }).catch((err) => {
      log.error("the newsletter sender did not start", { cause: err });
      throw err;
    });

  // One listener for HTTP and the hosted sign-in's WebSocket, counting requests in flight (decision 0820).
  const retryAfter = rt.config.retryAfterSeconds;
  const listener = serveApp(app, {
    hostname: rt.config.host,
    port: rt.config.port,
    // A request on a kept-alive connection after SIGTERM: refused, and the connection closed.
    refuse: () => unavailable("the server is shutting down; retry on another instance", retryAfter),
  });
  const server = listener.server;
  const url = `http://${rt.config.host.includes(":") ? `[${rt.config.host}]` : rt.config.host}:${server.port}`;
  // The CLI and scripts of this machine read the public base from here (DATA_DIR/api.json).
  const recorded = recordServer(rt.config.dataDir, { publicBaseUrl: rt.config.publicBaseUrl, url });
  log.info("api listening", { url, publicBaseUrl: rt.config.publicBaseUrl, recorded });
  const metricsServer =
    deps.metrics && rt.config.apiMetricsPort !== null
      ? serveApiMetrics({ port: rt.config.apiMetricsPort, hostname: rt.config.host, metrics: deps.metrics })
      : null;
  if (metricsServer) log.info("api metrics listening", { url: metricsServer.url });

  let stopping: Promise<void> | null = null;
  return {
    url,
    metricsUrl: metricsServer?.url ?? null,
    get inFlight() {
      return listener.inFlight;
    },
    stop(opts = {}) {
      stopping ??= (async () => {
        const graceMs = opts.graceMs ?? rt.config.timeouts.shutdownGraceMs;
        const t0 = performance.now();
        log.info("api stopping: no new connections", { inFlight: listener.inFlight, graceMs });
        const drained = await listener.drain({
          graceMs,
          cutShort: () =>
            unavailable(
              "the server is shutting down; the request did not finish in time, retry it",
              retryAfter,
            ),
        });
        await metricsServer?.stop();
        await sweeper.stop();
        await webhooks.stop();
        await social.stop();
        await (await sender?.catch(() => null))?.stop();
        await mailer.close();
        await renderWaits?.close();
        if (keys !== rt.keys) await keys?.close();
        if (limiter !== rt.limiter) await limiter?.close();
        log.info("api stopped", {
          finishedMs: Math.round(performance.now() - t0),
          ...drained,
        });
      })();
      return stopping;
    },
  };
}
