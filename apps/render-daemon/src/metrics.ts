/** The render outcomes counted by /metrics. */
export type Outcome = "done" | "failed" | "retried";

/** The stages timed by /metrics. */
export type Stage = "film" | "compose" | "store";

const BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

type Histogram = { counts: number[]; sum: number; count: number };

/** In-memory counters of one daemon, rendered as Prometheus text. */
export type RenderMetrics = {
  outcome(o: Outcome): void;
  observe(stage: Stage, seconds: number): void;
  /** Prometheus text exposition; `depth` is read from the queue at scrape time. */
  render(depth: number | null): string;
};

/** Creates the daemon's counters. */
export function createRenderMetrics(): RenderMetrics {
  const outcomes: Record<Outcome, number> = { done: 0, failed: 0, retried: 0 };
  const stages = new Map<Stage, Histogram>();
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
      lines.push("# HELP process_resident_memory_bytes Resident memory of the daemon process.");
      lines.push("# TYPE process_resident_memory_bytes gauge");
      lines.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`);
      return `${lines.join("\n")}\n`;
    },
  };
}

/** Serves GET /metrics (Prometheus text) on `port`; returns the listening URL and a stop function. */
export function serveMetrics(opts: {
  port: number;
  hostname?: string;
  metrics: RenderMetrics;
  depth: () => Promise<number>;
}): { url: string; stop(): Promise<void> } {
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.hostname ?? "0.0.0.0",
    fetch: async (req) => {
      const { pathname } = new URL(req.url);
      if (req.method !== "GET" || pathname !== "/metrics")
        return new Response("not found\n", { status: 404 });
      const depth = await opts.depth().catch(() => null);
      return new Response(opts.metrics.render(depth), {
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
