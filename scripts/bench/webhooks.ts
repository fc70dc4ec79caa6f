/**
 * Bench (run by hand, e.g. `nice -n 5 bun scripts/bench/webhooks.ts`): webhook delivery to receivers on
 * loopback, on TEST_DATABASE_URL (default local PostgreSQL), in-process queue.
 *  1. event-to-delivery latency: events recorded one at a time (commit → the receiver has it), p50/p99;
 *  2. throughput: 1,000 events queued while no dispatcher runs, then one starts: events/s to the fast
 *     receiver, while another organization's slow receiver (5 s answers) has 40 events queued too;
 *     the fast receiver's p99 wait shows the slow one does not hold it back.
 *   bun scripts/bench/webhooks.ts [events=1000] [latencySamples=200]
 */
import { buildTestApp } from "@site/api/testing";
import { recordEvent, startWebhookDispatcher } from "@site/domain/webhooks";

const EVENTS = Number(process.argv[2] ?? 1000);
const SAMPLES = Number(process.argv[3] ?? 200);
const received = new Map<string, number>();
const fast = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { data: { n: string } };
    received.set(body.data.n, performance.now());
    return new Response(null, { status: 204 });
  },
});
let slowSeen = 0;
const slow = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 30,
  async fetch() {
    slowSeen++;
    await Bun.sleep(5000);
    return new Response(null, { status: 204 });
  },
});
const h = await buildTestApp({
  env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${fast.port},127.0.0.1:${slow.port}`, WEBHOOK_TIMEOUT_MS: "10000" },
});
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
try {
  const keyOf = async () => h.seedOrg({ scopes: ["webhooks:write"] });
  const a = await keyOf();
  const b = await keyOf();
  for (const [o, port] of [
    [a, fast.port],
    [b, slow.port],
  ] as const) {
    const res = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: `http://127.0.0.1:${port}/hook`, events: ["site.published"] },
    });
    if (res.status !== 201) throw new Error(`webhook create: ${res.status} ${await res.text()}`);
  }
  const record = (orgId: string, n: string) =>
    h.db.transaction((tx) => recordEvent(tx, { orgId, type: "site.published", data: { n } }));

  // 1. Latency, one event at a time.
  let dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
  const lat: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const n = `lat-${i}`;
    const t0 = performance.now();
    await record(a.org.id, n);
    while (!received.has(n)) await Bun.sleep(1);
    lat.push(received.get(n)! - t0);
  }
  console.log(
    `latency: ${SAMPLES} events, commit → receiver p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms`,
  );
  await dispatcher.stop();

  // 2. Throughput with a slow receiver beside: everything queued first, then one dispatcher.
  for (let i = 0; i < 40; i++) await record(b.org.id, `slow-${i}`);
  const t0q = performance.now();
  for (let i = 0; i < EVENTS; i += 50)
    await h.db.transaction(async (tx) => {
      for (let j = i; j < Math.min(EVENTS, i + 50); j++)
        await recordEvent(tx, { orgId: a.org.id, type: "site.published", data: { n: `tp-${j}` } });
    });
  console.log(
    `queued ${EVENTS} events (+40 to the slow receiver) in ${(performance.now() - t0q).toFixed(0)} ms`,
  );
  const start = performance.now();
  dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
  const waits: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const n = `tp-${i}`;
    while (!received.has(n)) await Bun.sleep(2);
    waits.push(received.get(n)! - start);
  }
  const secs = (performance.now() - start) / 1000;
  console.log(
    `throughput: ${EVENTS} deliveries in ${secs.toFixed(2)} s = ${(EVENTS / secs).toFixed(0)}/s; fast receiver wait p50 ${pct(waits, 50).toFixed(0)} ms, p99 ${pct(waits, 99).toFixed(0)} ms; the slow receiver had ${slowSeen} tries in flight or done meanwhile (cap 4 per endpoint)`,
  );
  await dispatcher.stop({ graceMs: 100 });
} finally {
  await h.close();
  fast.stop(true);
  slow.stop(true);
}
