import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApi } from "@site/api";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { createRenderMetrics, serveMetrics } from "@site/render-daemon";

/**
 * `promtool check metrics` (Prometheus's own linter) passes on the API's and the render daemon's GET
 * /metrics (decision 1523): names, types and suffixes as Prometheus's conventions say (no gauge named
 * `*_total`). promtool comes from Debian's `prometheus` package (scripts/lib/bootstrap.sh's
 * ensure_promtool installs it where root); without it these tests are skipped, saying why.
 */
const promtool = Bun.which("promtool");
if (!promtool) console.warn("skipped: promtool_metrics_test: no promtool on PATH (apt install prometheus)");

/** promtool's verdict on one exposition: its exit code and what it said. */
async function promtoolCheck(text: string): Promise<{ code: number; said: string }> {
  const child = Bun.spawn([promtool!, "check", "metrics"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(text);
  await child.stdin.end();
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { code, said: `${out}${err}`.trim() };
}

describe.skipIf(!promtool)("promtool check metrics", () => {
  let h: TestApp;
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    h = await buildTestApp({
      env: { PORT: "0", API_METRICS_PORT: "0", DATA_DIR: "/tmp/site-test-promtool" },
    });
    api = startApi(runtimeOf(h));
  });
  afterAll(async () => {
    await api?.stop();
    await h?.close();
  });

  test("the linter bites: a gauge named *_total is refused", async () => {
    const verdict = await promtoolCheck("# HELP x_total A gauge.\n# TYPE x_total gauge\nx_total 1\n");
    expect(verdict.code).not.toBe(0);
    expect(verdict.said).toContain('non-counter metrics should not have "_total" suffix');
  });

  test("the API's /metrics passes, after answers were counted", async () => {
    const { key } = await h.seedOrg();
    expect(
      (await fetch(`${api.url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
    expect((await fetch(`${api.url}/no/such/path`)).status).toBe(404);
    const text = await (await fetch(api.metricsUrl!)).text();
    expect(text).toContain("http_requests_total{");
    expect(text).toContain("db_pool_connections{");
    expect(await promtoolCheck(text)).toEqual({ code: 0, said: "" });
  });

  test("the render daemon's /metrics passes, with renders, stages and refunds counted", async () => {
    const metrics = createRenderMetrics();
    metrics.outcome("done");
    metrics.outcome("failed");
    metrics.observe("film", 1.2);
    metrics.observeRender(3.4);
    metrics.refund(2);
    const served = serveMetrics({ port: 0, hostname: "127.0.0.1", metrics, depth: async () => 3 });
    try {
      const text = await (await fetch(served.url)).text();
      expect(text).toContain('renders_total{outcome="done"} 1');
      expect(text).toContain("webhook_deliveries_total");
      expect(await promtoolCheck(text)).toEqual({ code: 0, said: "" });
    } finally {
      await served.stop();
    }
  });
});
