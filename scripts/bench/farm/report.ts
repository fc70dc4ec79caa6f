// The farm scale bench's report: one farm's figures and checks, as printed by scripts/bench/farm_scale.ts.

import { cpus } from "node:os";
import type { FarmResult } from "./types.ts";

export function formatResult(r: FarmResult): string {
  const f = (x: number, d = 1) => x.toFixed(d);
  return [
    `workers ${r.options.workers}: ${r.renders} renders of ${r.options.orgs} orgs in ${f(r.wallS)} s`,
    `  dispatch ${f(r.throughputPerS)} renders/s (steady 10–90 %: ${f(r.steadyThroughputPerS)}/s); start ${f(r.startMs / 1000)} s`,
    `  admission (POST) p50 ${f(r.admissionMs.p50, 0)} ms, p99 ${f(r.admissionMs.p99, 0)} ms, max ${f(r.admissionMs.max, 0)} ms; queued→done p50 ${f(r.queueToDoneMs.p50 / 1000)} s, p99 ${f(r.queueToDoneMs.p99 / 1000)} s`,
    `  server connections: role max ${r.serverConnections.roleMax} (limit ${r.options.connLimit}), pooler servers max ${r.serverConnections.poolerServersMax} (pool ${r.options.poolSize}), clients waiting max ${r.serverConnections.clientsWaitingMax}, maxwait ${r.serverConnections.maxWaitS} s`,
    `  fairness: Jain index at half-time ${f(r.fairness.jainAtHalf, 3)}; per-org mean queued→done ${f(r.fairness.orgMeanLatencyMinMs / 1000)}–${f(r.fairness.orgMeanLatencyMaxMs / 1000)} s`,
    `  per render (run, farm-wide): ${f(r.perRender.xacts)} transactions, ${f(r.perRender.queries)} queries, ${f(r.perRender.redisCalls)} Redis calls, ${f(r.perRender.bytesStored / 1024, 0)} KiB stored`,
    `  per render, net of the idle farm: ${f(r.perRenderNet.xacts)} transactions, ${f(r.perRenderNet.queries)} queries, ${f(r.perRenderNet.redisCalls)} Redis calls; CPU ${f(r.perRenderNet.apiCpuMs)} ms API + ${f(r.perRenderNet.workerCpuMs)} ms daemon`,
    `  idle per worker per s: ${f(r.idlePerWorkerPerS.xacts, 2)} transactions, ${f(r.idlePerWorkerPerS.queries, 2)} queries, ${f(r.idlePerWorkerPerS.redisCalls, 2)} Redis calls, ${f(r.idlePerWorkerPerS.cpuMs)} ms CPU`,
    `  machine load (1 min) ${f(r.loadAvg[0])} at the start of the run, ${f(r.loadAvg[1])} at its end (${cpus().length} cores)`,
    `  Redis per render: ${JSON.stringify(r.redisTop)}`,
    r.failures.length
      ? `  FAILURES:\n    ${r.failures.join("\n    ")}`
      : "  checks: no double charge, none lost, none run or stored twice",
  ].join("\n");
}
