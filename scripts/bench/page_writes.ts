/**
 * Bench: adversarial page writes (issue 17, item 3) against a real listening API on a real database
 * (TEST_DATABASE_URL, default the machine's PostgreSQL). A worker thread asks /healthz every 5 ms while
 * each payload is written; the event loop's own lag and the CPU its thread spent between two 5 ms ticks
 * are sampled. Target: /healthz answers under 50 ms throughout, and nothing holds the loop 50 ms.
 *   bun scripts/bench/page_writes.ts            (PAGE_LOAD_ONLY=3,4 runs some payloads only)
 * Wall-clock figures include time the thread waited for a CPU: read them on a machine not otherwise busy.
 */
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { buildTestApp } from "@site/api/testing";
import { addLibraryFile } from "@site/domain/media";
import { adversarialPages, sampleImage } from "@site/domain/testing";

type Json = any;
const h = await buildTestApp();
const org = await h.seedOrg();
const key = org.key;
h.app.listen({ hostname: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${h.app.server!.port}`;
const created = await fetch(`${base}/api/v1/sites`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ name: "Load", slug: `load-${Math.random().toString(36).slice(2, 9)}` }),
});
const siteId = ((await created.json()) as Json).site.id;
const ownUrl = (await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" })).url;

/** A worker that GETs a URL every 5 ms until told to stop, then posts the latencies (ms). */
const PROBE = `
self.onmessage = async (event) => {
  const { url } = event.data;
  let stop = false;
  self.onmessage = () => { stop = true; };
  const latencies = [];
  while (!stop) {
    const t = performance.now();
    try { const res = await fetch(url); await res.arrayBuffer(); } catch {}
    latencies.push(performance.now() - t);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  self.postMessage(latencies);
};`;

const latencies: number[] = [];
let lag = 0;
let busy = 0;
// The event loop itself: a 5 ms timer fires late by how long the loop was held (CPU the loop's
// thread spent between two ticks, from /proc/thread-self/schedstat) or the thread waited for a CPU
// (a machine busy with other work): the first is what a request must not do.
const schedstat = "/proc/thread-self/schedstat";
const cpuNs = () => (existsSync(schedstat) ? Number(readFileSync(schedstat, "utf8").split(" ")[0]) : 0);
let last = performance.now();
let lastCpu = cpuNs();
const timer = setInterval(() => {
  const now = performance.now();
  const cpu = cpuNs();
  lag = Math.max(lag, now - last - 5);
  busy = Math.max(busy, (cpu - lastCpu) / 1e6);
  last = now;
  lastCpu = cpu;
}, 5);
const load = loadavg()[0]!;
// /healthz is probed from another thread, so a server that holds its loop shows in the figures.
const probe = new Worker(URL.createObjectURL(new Blob([PROBE], { type: "application/javascript" })));
probe.postMessage({ url: `${base}/healthz` });
const results: { name: string; status: number; ms: number; bytes: number }[] = [];
const answers: [string, number, string, number][] = [];
const only = process.env.PAGE_LOAD_ONLY?.split(",").map(Number);
let i = 0;
try {
  for (const { name, content, expected } of adversarialPages(ownUrl).filter(
    (_, n) => !only || only.includes(n),
  )) {
    const t = performance.now();
    const res = await fetch(`${base}/api/v1/sites/${siteId}/pages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ path: `/load-${i++}`, title: "Load", content }),
    });
    const body = (await res.json()) as Json;
    results.push({
      name,
      status: res.status,
      ms: Math.round(performance.now() - t),
      bytes: content.length,
    });
    answers.push([name, res.status, res.status === 400 ? body.error.code : "created", expected]);
  }
} finally {
  const done = new Promise<number[]>((resolve) => {
    probe.onmessage = (e: MessageEvent<number[]>) => resolve(e.data);
  });
  probe.postMessage("stop");
  latencies.push(...(await done));
  probe.terminate();
  clearInterval(timer);
  console.table(results);
}
const sorted = [...latencies].sort((a, b) => a - b);
const max = sorted[sorted.length - 1]!;
const p99 = sorted[Math.floor(sorted.length * 0.99)]!;
console.log(
  `healthz: ${latencies.length} probes, median ${sorted[sorted.length >> 1]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms; event loop: longest hold ${busy.toFixed(1)} ms of CPU, longest lag ${lag.toFixed(1)} ms; load average ${load.toFixed(1)} on ${cpus().length} CPUs`,
);
const wrong = answers.filter(([, status, , expected]) =>
  expected === 0 ? ![201, 400].includes(status) : status !== expected,
);
console.log(
  `target: /healthz max under 50 ms, no event-loop hold over 50 ms of CPU: ${max < 50 && busy < 50 ? "met" : "MISSED"}; unexpected answers: ${wrong.length}`,
);
await h.app.stop(true);
await h.close();
process.exit(0);
