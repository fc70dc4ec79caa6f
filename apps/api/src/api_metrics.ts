import type { Database } from "@site/db";
import { registerWebhookMetrics } from "@site/domain/webhooks";
import { sql } from "drizzle-orm";
import { Elysia } from "elysia";
import client from "prom-client";

/** Latency buckets of an API answer, in seconds (a keyed read is ~2 ms; a template clone several s). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The label of a request no route matched: raw paths never become labels (their ids would explode). */
export const UNMATCHED_ROUTE = "unmatched";

/** The API's Prometheus registry and the recorders the app calls (decision 0711). */
export type ApiMetrics = {
  registry: client.Registry;
  /** Counts one answer under its route template (`/api/v1/sites/:siteId`), never its raw path. */
  observe(method: string, route: string, status: number, seconds: number): void;
  /** The text exposition (format 0.0.4). */
  render(): Promise<string>;
  contentType: string;
};

/**
 * Creates the API's metrics: `http_requests_total{method,route,status}`,
 * `http_request_duration_seconds{method,route}` (histogram), the database pool of this process as
 * PostgreSQL sees it (`db_pool_connections{state}`, `db_pool_max`), and prom-client's process metrics:
 * CPU, resident memory, heap and event-loop lag (`nodejs_eventloop_lag_*`).
 */
export function createApiMetrics(
  opts: { db?: Database; poolMax?: number; scrapeTimeoutMs?: number } = {},
): ApiMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  dropTotalGauges(registry);
  // Webhook tries this process made: webhook_deliveries_total, webhook_delivery_duration_seconds.
  registerWebhookMetrics(registry);
  const requests = new client.Counter({
    name: "http_requests_total",
    help: "API answers by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: "http_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by method and route template.",
    labelNames: ["method", "route"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new client.Gauge({
    name: "db_pool_max",
    help: "Connections this process's database pool may open (DB_POOL_MAX).",
    registers: [registry],
    collect() {
      if (opts.poolMax !== undefined) this.set(opts.poolMax);
    },
  });
  const db = opts.db;
  const timeoutMs = opts.scrapeTimeoutMs ?? 1000;
  new client.Gauge({
    name: "db_pool_connections",
    help: "Open connections of this process's database pool by state (active, idle, idle in transaction), as pg_stat_activity reports them.",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      if (!db) return;
      // The pool names its connections "site-content-api <host>:<pid>" (libs/db): this process's only.
      const read = db.execute<{ state: string | null; n: number }>(
        sql`select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity
            where application_name = current_setting('application_name') and datname = current_database()
            group by 1`,
      );
      const rows = await Promise.race([
        read.then((r) => [...r] as { state: string; n: number }[]),
        Bun.sleep(timeoutMs).then(() => null),
      ]).catch(() => null);
      if (!rows) return; // the database did not answer in time: the series is absent, the scrape answers.
      for (const state of ["active", "idle", "idle in transaction"]) this.set({ state }, 0);
      for (const r of rows) this.set({ state: r.state }, r.n);
    },
  });
  return {
    registry,
    contentType: registry.contentType,
    observe(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
    },
    render: () => registry.metrics(),
  };
}

/**
 * Removes the gauges whose name ends in `_total` (decision 1523): Prometheus keeps that suffix for
 * counters, and `promtool check metrics` refuses the three prom-client's default metrics bring
 * (`nodejs_active_handles_total`, `nodejs_active_requests_total`, `nodejs_active_resources_total`).
 * Each is the sum of the per-type gauge registered beside it (`sum(nodejs_active_handles)`), so nothing
 * is lost; no alert, dashboard or contract names them.
 */
function dropTotalGauges(registry: client.Registry): void {
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (name.endsWith("_total") && type !== "counter") registry.removeSingleMetric(name);
  }
}

const started = new WeakMap<Request, number>();

/**
 * Records every answer of the app it is used in (errors and unmatched paths included) under its route
 * template; a request no route matched is labelled `unmatched`.
 */
export function requestMetrics(metrics: ApiMetrics | undefined) {
  const plugin = new Elysia({ name: "request-metrics" });
  if (!metrics) return plugin;
  return plugin
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, (ctx) => {
      const t0 = started.get(ctx.request);
      if (t0 === undefined) return;
      started.delete(ctx.request);
      // The answer's status: the Response the route or the error handler made; for a path no route
      // matched (no error handler ran) the error's own status; else what the handler set.
      const { responseValue, set, error } = ctx as typeof ctx & { responseValue?: unknown; error?: unknown };
      const errorStatus = (error as { status?: unknown } | undefined)?.status;
      const status =
        responseValue instanceof Response
          ? responseValue.status
          : typeof errorStatus === "number"
            ? errorStatus
            : typeof set.status === "number"
              ? set.status
              : 200;
      const route = (ctx as { route?: string }).route || UNMATCHED_ROUTE;
      metrics.observe(ctx.request.method, route, status, (performance.now() - t0) / 1000);
    });
}

/** Serves GET /metrics (Prometheus text) on its own port; returns its URL and a stop function. */
export function serveApiMetrics(opts: { port: number; hostname: string; metrics: ApiMetrics }): {
  url: string;
  stop(): Promise<void>;
} {
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.hostname,
    fetch: async (req) => {
      const { pathname } = new URL(req.url);
      if (req.method !== "GET" || pathname !== "/metrics")
        return new Response("not found\n", { status: 404 });
      return new Response(await opts.metrics.render(), {
        headers: { "content-type": opts.metrics.contentType },
      });
    },
  });
  const host = opts.hostname.includes(":") ? `[${opts.hostname}]` : opts.hostname;
  return {
    url: `http://${host}:${server.port}/metrics`,
    stop: async () => {
      await server.stop(true);
    },
  };
}
