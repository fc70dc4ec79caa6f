import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { DB_POOL_DEFAULTS } from "@site/config";
// @ts-expect-error: the parser ships no types; its output is checked below.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { type RunningApi, startApi } from "./server.ts";

// The API's GET /metrics, on its own port (API_METRICS_PORT), read by a Prometheus text parser.
type Family = {
  name: string;
  type: string;
  metrics: {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
  }[];
};
const parse = parsePrometheusTextFormat as (text: string) => Family[];

let h: TestApp;
let api: RunningApi;
let off: RunningApi;
beforeAll(async () => {
  h = await buildTestApp({ env: { PORT: "0", API_METRICS_PORT: "0", DATA_DIR: "/tmp/site-test-metrics" } });
  api = startApi(runtimeOf(h));
});
afterAll(async () => {
  await api.stop();
  await off?.stop();
  await h.close();
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(api.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  return new Map(parse(await res.text()).map((f) => [f.name, f]));
}

describe("API GET /metrics", () => {
  test("requests by route template and status, never by raw path; latency as a histogram", async () => {
    const { key } = await h.seedOrg();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${api.url}/api/v1/sites`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Metered", slug: `metered-${i}-${Date.now()}` }),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { site: { id: string } }).site.id);
    }
    for (const id of ids) {
      const res = await fetch(`${api.url}/api/v1/sites/${id}/pages`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
    }
    expect((await fetch(`${api.url}/api/v1/sites`)).status).toBe(401);
    expect((await fetch(`${api.url}/no/such/${ids[0]}`)).status).toBe(404);

    const families = await scrape();
    const requests = families.get("http_requests_total")!;
    expect(requests.type).toBe("COUNTER");
    const count = (labels: Record<string, string>) =>
      requests.metrics
        .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
        .reduce((n, m) => n + Number(m.value), 0);
    expect(count({ method: "POST", route: "/api/v1/sites", status: "201" })).toBe(2);
    expect(count({ method: "GET", route: "/api/v1/sites/:siteId/pages", status: "200" })).toBe(2);
    expect(count({ method: "GET", route: "/api/v1/sites", status: "401" })).toBe(1);
    expect(count({ route: "unmatched", status: "404" })).toBe(1);
    // Labels are templates: no site id appears in any of them.
    const text = JSON.stringify([...families.values()]);
    for (const id of ids) expect(text).not.toContain(id);

    const latency = families.get("http_request_duration_seconds")!;
    expect(latency.type).toBe("HISTOGRAM");
    // The parser merges a labelled histogram's series into one sample, so the per-route series are read
    // from the text it accepted.
    const series = (await (await fetch(api.metricsUrl!)).text()).split("\n");
    const route = 'method="GET",route="/api/v1/sites/:siteId/pages"';
    expect(series).toContain(`http_request_duration_seconds_count{${route}} 2`);
    expect(series).toContain(`http_request_duration_seconds_bucket{le="+Inf",${route}} 2`);
  });

  test("the database pool, event-loop lag, process CPU and memory", async () => {
    const families = await scrape();
    expect(Number(families.get("db_pool_max")!.metrics[0]!.value)).toBe(
      h.ctx.config.dbPoolMax ?? DB_POOL_DEFAULTS.api,
    );
    const pool = families.get("db_pool_connections")!;
    const states = Object.fromEntries(pool.metrics.map((m) => [m.labels!.state, Number(m.value)]));
    // The scrape's own query is running on one of this process's connections.
    expect(states.active).toBeGreaterThanOrEqual(1);
    expect(states).toHaveProperty("idle");
    for (const name of [
      "nodejs_eventloop_lag_seconds",
      "nodejs_eventloop_lag_p99_seconds",
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
    ]) {
      const family = families.get(name);
      expect(family, name).toBeDefined();
      expect(Number(family!.metrics[0]!.value)).toBeGreaterThanOrEqual(0);
    }
    expect(Number(families.get("process_resident_memory_bytes")!.metrics[0]!.value)).toBeGreaterThan(1e6);
  });

  test("only GET /metrics is served there; the API port has no /metrics; unset, no listener", async () => {
    const other = await fetch(api.metricsUrl!.replace("/metrics", "/"));
    expect(other.status).toBe(404);
    expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
    const h2 = { ...runtimeOf(h), config: { ...h.ctx.config, apiMetricsPort: null, port: 0 } };
    off = startApi(h2);
    expect(off.metricsUrl).toBeNull();
  });
});
