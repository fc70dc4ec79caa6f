// The farm's figures, from the render rows and the counters read before and after the run.

import { join } from "node:path";
import { dirBytes, pct, sumCalls } from "./measure.ts";
import type { FarmOptions, FarmResult, IdleRates, RenderRow, Submitted } from "./types.ts";
import type { Snapshot } from "./watch.ts";

export type FigureInput = {
  opts: FarmOptions;
  dir: string;
  rows: RenderRow[];
  submitted: Submitted[];
  admissionMs: number[];
  startMs: number;
  conns: FarmResult["serverConnections"];
  idlePerWorkerPerS: IdleRates;
  idleApiCpuMsPerS: number;
  run0: Snapshot;
  run1: Snapshot;
  loadAvg: [number, number];
};

/** Throughput, latencies, fairness and work per render (gross and net of the idle farm). */
export function computeFigures(i: FigureInput, failures: string[]): FarmResult {
  const { opts, rows, submitted, admissionMs, run0, run1, idlePerWorkerPerS } = i;
  const created = rows.map((r) => Number(r.created));
  const finished = rows.filter((r) => r.finished).map((r) => Number(r.finished));
  finished.sort((a, b) => a - b);
  const first = Math.min(...created);
  const wallS = (Math.max(...finished) - first) / 1000;
  const lo = finished[Math.floor(finished.length * 0.1)]!;
  const hi = finished[Math.floor(finished.length * 0.9)]!;
  const steady = (Math.floor(finished.length * 0.9) - Math.floor(finished.length * 0.1)) / ((hi - lo) / 1000);
  const lat = rows
    .filter((r) => r.finished)
    .map((r) => Number(r.finished) - Number(r.created))
    .sort((a, b) => a - b);
  const half = finished[Math.floor(finished.length / 2)]!;
  const orgOf = new Map(submitted.map((s) => [s.id, s.org]));
  const atHalf = new Array(opts.orgs).fill(0);
  const latSum = new Array(opts.orgs).fill(0);
  for (const r of rows) {
    const org = orgOf.get(r.id);
    if (org === undefined || !r.finished) continue;
    if (Number(r.finished) <= half) atHalf[org]++;
    latSum[org] += Number(r.finished) - Number(r.created);
  }
  const jain = atHalf.reduce((a, b) => a + b, 0) ** 2 / (opts.orgs * atHalf.reduce((a, b) => a + b * b, 0));
  const orgMeans = latSum.map((s) => s / opts.rendersPerOrg);
  admissionMs.sort((a, b) => a - b);
  const n = Math.max(1, submitted.length);
  const runS = (run1.t - run0.t) / 1000;
  // worker-seconds of the idle farm's own work within the run
  const idleWork = runS * opts.workers;
  const redisDelta: Record<string, number> = {};
  for (const [k, v] of Object.entries(run1.redis))
    if (k !== "info" && v - (run0.redis[k] ?? 0) > 0) redisDelta[k] = v - (run0.redis[k] ?? 0);
  const redisTop = Object.fromEntries(
    Object.entries(redisDelta)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => [k, Math.round((v / n) * 10) / 10]),
  );
  const { say: _s, serverUrl: _u, ...shown } = opts;
  return {
    options: shown,
    renders: submitted.length,
    startMs: i.startMs,
    wallS,
    throughputPerS: submitted.length / wallS,
    steadyThroughputPerS: steady,
    admissionMs: { p50: pct(admissionMs, 50), p99: pct(admissionMs, 99), max: admissionMs.at(-1) ?? 0 },
    queueToDoneMs: { p50: pct(lat, 50), p99: pct(lat, 99) },
    serverConnections: i.conns,
    fairness: {
      jainAtHalf: jain,
      orgMeanLatencyMinMs: Math.min(...orgMeans),
      orgMeanLatencyMaxMs: Math.max(...orgMeans),
    },
    perRender: {
      xacts: (run1.db.xacts - run0.db.xacts) / n,
      queries: (run1.db.queries - run0.db.queries) / n,
      redisCalls: sumCalls(run0.redis, run1.redis) / n,
      bytesStored: dirBytes(join(i.dir, "data", "objects")) / n,
    },
    perRenderNet: {
      xacts: (run1.db.xacts - run0.db.xacts - idleWork * idlePerWorkerPerS.xacts) / n,
      queries: (run1.db.queries - run0.db.queries - idleWork * idlePerWorkerPerS.queries) / n,
      redisCalls: (sumCalls(run0.redis, run1.redis) - idleWork * idlePerWorkerPerS.redisCalls) / n,
      apiCpuMs: ((run1.cpu.api - run0.cpu.api) * 1000 - i.idleApiCpuMsPerS * runS) / n,
      workerCpuMs: ((run1.cpu.workers - run0.cpu.workers) * 1000 - idleWork * idlePerWorkerPerS.cpuMs) / n,
    },
    idlePerWorkerPerS,
    loadAvg: i.loadAvg,
    redisTop,
    failures,
  };
}
