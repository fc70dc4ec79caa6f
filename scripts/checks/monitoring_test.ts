import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRenderMetrics } from "@site/render-daemon";

// The dashboard and the alert rules read the daemon's /metrics: every series they name must exist there.
const ROOT = join(import.meta.dir, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Series the daemon exports (histograms with their _bucket/_sum/_count), plus Prometheus' own `up`. */
function exportedSeries(): Set<string> {
  const text = createRenderMetrics().render(0);
  const names = new Set(["up"]);
  for (const m of text.matchAll(/^# TYPE (\w+) (\w+)$/gm)) {
    names.add(m[1]!);
    if (m[2] === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(`${m[1]}${s}`);
  }
  return names;
}

/** Metric names used in a PromQL expression (identifiers followed by `{`, `[`, a space or the end). */
function seriesIn(expr: string): string[] {
  const functions = /^(sum|max|min|rate|increase|histogram_quantile|clamp_min|absent|by|and|or|le)$/;
  return [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\s*(?=\{|\[|\)|$|\s|>|<|=|\*)/g)]
    .map((m) => m[1]!)
    .filter(
      (n) =>
        (n.includes("_") || n === "up") && !functions.test(n) && !/^(job|instance|outcome|stage)$/.test(n),
    );
}

describe("operators' monitoring (infra/grafana, infra/prometheus)", () => {
  const exported = exportedSeries();

  test("the Grafana dashboard is valid JSON and every panel queries series the daemon exports", () => {
    const dash = JSON.parse(read("infra/grafana/dashboards/render-daemons.json"));
    expect(dash.uid).toBe("site-render-daemons");
    expect(dash.panels.length).toBeGreaterThanOrEqual(8);
    const titles = dash.panels.map((p: { title: string }) => p.title.toLowerCase()).join(" | ");
    for (const topic of ["queue depth", "latency", "outcome", "refunds", "failure"])
      expect(titles).toContain(topic);
    for (const panel of dash.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const t of panel.targets)
        for (const name of seriesIn(t.expr)) expect(exported.has(name), `${panel.title}: ${name}`).toBe(true);
    }
  });

  test("the alert rules parse, cover queue depth, latency, failures and refunds, and name real series", () => {
    const rules = Bun.YAML.parse(read("infra/prometheus/render-alerts.yaml")) as {
      groups: {
        name: string;
        rules: {
          alert: string;
          expr: string;
          for: string;
          labels: { severity: string };
          annotations: { summary: string };
        }[];
      }[];
    };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        "RenderQueueBacklog",
        "RenderLatencyHigh",
        "RenderFailureRateHigh",
        "RenderRefundsSpike",
      ]),
    );
    for (const r of all) {
      expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
      expect(["warning", "critical"]).toContain(r.labels.severity);
      expect(r.annotations.summary.length, r.alert).toBeGreaterThan(10);
      for (const name of seriesIn(r.expr)) expect(exported.has(name), `${r.alert}: ${name}`).toBe(true);
    }
    const prometheus = Bun.YAML.parse(read("infra/prometheus/prometheus.yml")) as { rule_files: string[] };
    expect(prometheus.rule_files).toContain("/etc/prometheus/render-alerts.yaml");
  });
});
