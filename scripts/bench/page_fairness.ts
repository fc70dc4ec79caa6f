/**
 * Bench: page-write fairness between organizations (issue 25 item 3, decision 0612), against a real
 * listening API on a real database (TEST_DATABASE_URL, default the machine's PostgreSQL). One
 * organization floods with pathological writes (`"*a"` × 100,000, each different, FLOOD_CONCURRENCY in
 * flight, from a thread of its own); another writes one-line pages one after another, first quiet, then
 * during the flood. Target: its p99 during the flood under 3× its quiet p99.
 *   bun scripts/bench/page_fairness.ts        (WRITES=60 FLOOD_CONCURRENCY=8 to change the load)
 * FLOOD_PAUSE_MS: how long the flooder waits after a 429 before its next write (0, the default: at once,
 * Retry-After ignored; -1: as Retry-After says). Refused writes are answered before their body is read,
 * but at 0 the flooder sends thousands of 200 KB requests a second: that measures request flooding
 * (per-key rate limits, RATE_LIMIT_REQUESTS, decision 0804) more than parsing.
 * Run by hand, not in tests. Wall-clock figures: read them on a machine not otherwise busy.
 */
import { cpus, loadavg } from "node:os";
import { buildTestApp } from "@site/api/testing";
import { PAGE_SCAN_TENANT_RUNNING, PAGE_SCAN_TENANT_WAITING, PAGE_SCAN_WORKERS } from "@site/domain/content";

type Json = any;
const WRITES = Number(process.env.WRITES ?? 60);
const FLOOD_CONCURRENCY = Number(process.env.FLOOD_CONCURRENCY ?? 8);
/** After a 429 the flooder waits this many ms before its next write; -1: as long as Retry-After says. */
const FLOOD_PAUSE_MS = Number(process.env.FLOOD_PAUSE_MS ?? 0);
const uniq = () => Math.random().toString(36).slice(2, 9);

/** The flooding client: `concurrency` pathological writes in flight until told to stop; posts the answer counts. */
const FLOODER = `
self.onmessage = async (event) => {
  const { url, key, concurrency, pause } = event.data;
  let stop = false;
  self.onmessage = () => { stop = true; };
  const counts = {};
  const loop = async () => {
    while (!stop) {
      const body = JSON.stringify({
        path: "/f-" + Math.random().toString(36).slice(2, 9),
        title: "F",
        content: "*a".repeat(100000) + "\\n\\n" + Math.random(),
      });
      try {
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: "Bearer " + key, "content-type": "application/json" },
          body,
        });
        await res.arrayBuffer();
        counts[res.status] = (counts[res.status] ?? 0) + 1;
        if (res.status === 429) {
          const wait = pause < 0 ? Number(res.headers.get("retry-after") ?? 1) * 1000 : pause;
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      } catch {
        counts.error = (counts.error ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  self.postMessage(counts);
};
`;

const h = await buildTestApp();
h.app.listen({ hostname: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${h.app.server!.port}`;

async function post(key: string, path: string, body: unknown) {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  return { status: res.status, json, ms: performance.now() - t0 };
}
async function siteOf(key: string) {
  return (await post(key, "/api/v1/sites", { name: "S", slug: `fair-${uniq()}` })).json.site.id as string;
}
const p = (ms: number[], q: number) => {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

try {
  const flooder = await h.seedOrg();
  const victim = await h.seedOrg();
  const [floodSite, victimSite] = await Promise.all([siteOf(flooder.key), siteOf(victim.key)]);
  const victimWrites = async () => {
    const ms: number[] = [];
    for (let i = 0; i < WRITES; i++) {
      const r = await post(victim.key, `/api/v1/sites/${victimSite}/pages`, {
        path: `/p-${uniq()}`,
        title: "T",
        content: `One line ${uniq()}.`,
      });
      if (r.status !== 201) throw new Error(`victim write answered ${r.status}: ${JSON.stringify(r.json)}`);
      ms.push(r.ms);
    }
    return ms;
  };

  // Warm up (workers started, statements prepared), then the quiet figures.
  await victimWrites();
  const quiet = await victimWrites();

  // The flooder is another client: its own thread, so its requests cost the API only what they cost it.
  const flood = new Worker(URL.createObjectURL(new Blob([FLOODER], { type: "text/javascript" })));
  const answers = new Promise<Record<string, number>>((resolve) => {
    flood.onmessage = (event: MessageEvent<Record<string, number>>) => resolve(event.data);
  });
  flood.postMessage({
    url: `${base}/api/v1/sites/${floodSite}/pages`,
    key: flooder.key,
    concurrency: FLOOD_CONCURRENCY,
    pause: FLOOD_PAUSE_MS,
  });
  await Bun.sleep(1_000);
  const during = await victimWrites();
  flood.postMessage("stop");
  const counts = await answers;
  flood.terminate();

  const quietP99 = p(quiet, 0.99);
  const floodP99 = p(during, 0.99);
  const f = (n: number) => n.toFixed(1);
  console.log(
    `machine: ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(
        " ",
      )}; parser workers ${PAGE_SCAN_WORKERS}, per organization ${PAGE_SCAN_TENANT_RUNNING} running + ${PAGE_SCAN_TENANT_WAITING} waiting`,
  );
  console.log(`victim quiet  (${WRITES} writes): p50 ${f(p(quiet, 0.5))} ms, p99 ${f(quietP99)} ms`);
  console.log(`victim flood  (${WRITES} writes): p50 ${f(p(during, 0.5))} ms, p99 ${f(floodP99)} ms`);
  console.log(
    `flood answers (${FLOOD_CONCURRENCY} in flight, ${FLOOD_PAUSE_MS < 0 ? "Retry-After honoured" : `next write ${FLOOD_PAUSE_MS} ms after a 429`}): ${JSON.stringify(counts)}`,
  );
  console.log(
    `p99 flood / quiet: ${(floodP99 / quietP99).toFixed(2)} (target < 3) ${floodP99 < 3 * quietP99 ? "PASS" : "FAIL"}`,
  );
} finally {
  h.app.stop(true);
  await h.close();
}
