import { webhookMetricsText } from "@site/domain/webhooks";
import { livenessResponse, type Readiness, readinessResponse } from "@site/runtime";

/** The render outcomes counted by /metrics. */
export type Outcome = "done" | "failed" | "retried";

/** The stages timed by /metrics. */
export type Stage = "film" | "compose" | "store";

const BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const RENDER_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300];

type Histogram = { counts: number[]; sum: number; count: number };

/** In-memory counters of one daemon, rendered as Prometheus text. */
export type RenderMetrics = {
  outcome(o: Outcome): void;
  observe(stage: Stage, seconds: number): void;
  /** A render's whole try, from taking the job to done (the render latency the alerts watch). */
  observeRender(seconds: number): void;
  /** Credits given back for renders that failed for good (`n` at once from a sweeper pass). */
  refund(n?: number): void;
  /** Prometheus text exposition; `depth` is read from the queue at scrape time. */
  render(depth: number | null): string;
};

/** Creates the daemon's counters. */
export function createRenderMetrics(): RenderMetrics {
  const outcomes: Record<Outcome, number> = { done: 0, failed: 0, retried: 0 };
  const stages = new Map<Stage, Histogram>();
  const renders: Histogram = { counts: RENDER_BUCKETS.map(() => 0), sum: 0, count: 0 };
  let refunds = 0;
  for (const s of ["film", "compose", "store"] as Stage[])
    stages.set(s, { counts: BUCKETS.map(() => 0), sum: 0, count: 0 });
  return {
    outcome(o) {
      outcomes[o]++;
    },
    observe(stage, seconds) {
      const h = stages.get(stage);
      if (!h) return;
      h.sum += seconds;
      h.count++;
      BUCKETS.forEach((b, i) => {
        if (seconds <= b) h.counts[i]++;
      });
    },
    observeRender(seconds) {
      renders.sum += seconds;
      renders.count++;
      RENDER_BUCKETS.forEach((b, i) => {
        if (seconds <= b) renders.counts[i]++;
      });
    },
    refund(n = 1) {
      refunds += n;
    },
    render(depth) {
      const lines: string[] = [];
      lines.push("# HELP render_queue_depth Render jobs waiting to run (waiting + delayed).");
      lines.push("# TYPE render_queue_depth gauge");
      if (depth !== null) lines.push(`render_queue_depth ${depth}`);
      lines.push(
        "# HELP renders_total Render tries by outcome (retried: a transient failure that will run again).",
      );
      lines.push("# TYPE renders_total counter");
      for (const [o, n] of Object.entries(outcomes)) lines.push(`renders_total{outcome="${o}"} ${n}`);
      lines.push("# HELP render_stage_seconds Time spent per render stage.");
      lines.push("# TYPE render_stage_seconds histogram");
      for (const [stage, h] of stages) {
        BUCKETS.forEach((b, i) => {
          lines.push(`render_stage_seconds_bucket{stage="${stage}",le="${b}"} ${h.counts[i]}`);
        });
        lines.push(`render_stage_seconds_bucket{stage="${stage}",le="+Inf"} ${h.count}`);
        lines.push(`render_stage_seconds_sum{stage="${stage}"} ${h.sum.toFixed(6)}`);
        lines.push(`render_stage_seconds_count{stage="${stage}"} ${h.count}`);
      }
      lines.push("# HELP render_duration_seconds A render's try from taking the job to done.");
      lines.push("# TYPE render_duration_seconds histogram");
      RENDER_BUCKETS.forEach((b, i) => {
        lines.push(`render_duration_seconds_bucket{le="${b}"} ${renders.counts[i]}`);
      });
      lines.push(`render_duration_seconds_bucket{le="+Inf"} ${renders.count}`);
      lines.push(`render_duration_seconds_sum ${renders.sum.toFixed(6)}`);
      lines.push(`render_duration_seconds_count ${renders.count}`);
      lines.push("# HELP render_refunds_total Renders that failed for good and had their credits refunded.");
      lines.push("# TYPE render_refunds_total counter");
      lines.push(`render_refunds_total ${refunds}`);
      lines.push("# HELP process_resident_memory_bytes Resident memory of the daemon process.");
      lines.push("# TYPE process_resident_memory_bytes gauge");
      lines.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`);
      return `${lines.join("\n")}\n`;
    },
  };
}

/**
 * Serves GET /metrics (Prometheus text: the render counters, then the webhook ones) on `port`, and GET
 * /healthz and /readyz when `health` is given; returns the listening URL of /metrics and a stop function.
 */
export function serveMetrics(opts: {
  port: number;
  hostname?: string;
  metrics: RenderMetrics;
  depth: () => Promise<number>;
  health?: { ready: () => Promise<Readiness>; retryAfterSeconds: number; stopping: () => boolean };
}): { url: string; stop(): Promise<void> } {
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.hostname ?? "0.0.0.0",
    fetch: async (req) => {
      const { pathname } = new URL(req.url);
      const health = opts.health;
      if (health && req.method === "GET" && pathname === "/healthz") return livenessResponse();
      if (health && req.method === "GET" && pathname === "/readyz")
        return readinessResponse(
          health.stopping() ? "stopping" : await health.ready(),
          health.retryAfterSeconds,
        );
      if (req.method !== "GET" || pathname !== "/metrics")
        return new Response("not found\n", { status: 404 });
      const depth = await opts.depth().catch(() => null);
      // The webhook tries this process made (its dispatcher, decision 0841), from prom-client's registry.
      const webhooks = await webhookMetricsText().catch(() => "");
      return new Response(opts.metrics.render(depth) + webhooks, {
        headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
      });
    },
  });
  return {
    url: `http://${server.hostname}:${server.port}/metrics`,
    stop: async () => {
      await server.stop(true);
    },
  };
}
