/**
 * Bench: fairness between organizations (issue 17.4). A warm render daemon on the defaults
 * (RENDER_CONCURRENCY 2, RENDER_ORG_CONCURRENCY 2, RENDER_PAGE_DEADLINE_MS 20 s; in-process queue, or
 * BullMQ with REDIS_URL), real Chromium, real PostgreSQL. Organization A queues 30 renders of pages that
 * never finish (half busy-loop, half never answer); then organization B queues one ordinary render.
 * Target: B's render is done within its normal time (B alone, measured first) plus one page deadline.
 * Also reports how A's flood drains: each hang ends failed after about one deadline, is not retried, and
 * is refunded; A never has more than its cap in progress.
 *   bun scripts/bench/render_fairness.ts            (in-process queue)
 *   REDIS_URL=redis://127.0.0.1:6379 bun scripts/bench/render_fairness.ts   (BullMQ)
 * RENDER_ORG_CONCURRENCY / RENDER_PAGE_DEADLINE_MS override the defaults; BENCH_DRAIN=0 skips waiting
 * for the flood to drain.
 */

import { buildTestApp, runtimeOf } from "@site/api/testing";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import { creditLedger, organizations, screenshotRenders } from "@site/db";
import { createBullQueue } from "@site/queue";
import { startRenderDaemon } from "@site/render-daemon";
import { and, eq, isNotNull } from "drizzle-orm";

const FLOOD = 30;
const redisUrl = process.env.REDIS_URL || null;
const pages = servePages({
  "/": () => html(LANDING),
  "/busy": () => html(`<!doctype html><body><h1>busy</h1><script>while (true) {}</script></body>`),
});
// A server that takes the connection and never answers (an HTTP server would time the request out).
const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
const neverUrl = (q: string) => `http://127.0.0.1:${silent.port}/never?${q}`;
const allowHosts = `${pages.host},127.0.0.1:${silent.port}`;
const defaults = loadConfig({ SECRET_KEY: "bench-secret-key-0123456789", DATA_DIR: "/tmp/site-bench" });
const h = await buildTestApp({
  env: {
    FETCH_ALLOW_HOSTS: allowHosts,
    ...(process.env.RENDER_ORG_CONCURRENCY
      ? { RENDER_ORG_CONCURRENCY: process.env.RENDER_ORG_CONCURRENCY }
      : {}),
    ...(process.env.RENDER_PAGE_DEADLINE_MS
      ? { RENDER_PAGE_DEADLINE_MS: process.env.RENDER_PAGE_DEADLINE_MS }
      : {}),
  },
  queue: redisUrl
    ? createBullQueue({
        redisUrl,
        log: createLogger("silent" as never),
        prefix: `bench-fair-${Date.now().toString(36)}`,
      })
    : undefined,
});
const deadline = h.ctx.config.renderPageDeadlineMs;
const daemon = await startRenderDaemon(runtimeOf(h));
const orgWithSite = async (credits: number) => {
  const o = await h.seedOrg({ credits });
  const res = await h.call("POST", "/api/v1/sites", {
    key: o.key,
    body: { name: "F", slug: `fair-${Math.random().toString(36).slice(2, 9)}` },
  });
  return { ...o, siteId: ((await res.json()) as { site: { id: string } }).site.id };
};
const queueShot = async (o: { key: string; siteId: string }, url: string) => {
  const res = await h.call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, {
    key: o.key,
    body: { url },
  });
  if (res.status !== 202) throw new Error(`queue answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { renderId: string }).renderId;
};
const rowOf = async (id: string) =>
  (await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, id)))[0];
const settled = (id: string, ms = 30 * 60_000) =>
  until(async () => {
    const r = await rowOf(id);
    return r.status === "pending" ? null : r;
  }, ms);

try {
  const a = await orgWithSite(10 * FLOOD);
  const b = await orgWithSite(100);
  // Warm-up, then B's normal time alone (best of three).
  await settled(await queueShot(b, pages.url("/?warm=1")));
  const alone: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = await settled(await queueShot(b, pages.url(`/?alone=${i}`)));
    if (r.status !== "done") throw new Error(`B's render failed: ${r.error}`);
    alone.push(performance.now() - t0);
  }
  const normal = Math.min(...alone);

  const floodStart = performance.now();
  const hanging: string[] = [];
  for (let i = 0; i < FLOOD; i++)
    hanging.push(await queueShot(a, i % 2 ? neverUrl(`i=${i}`) : pages.url(`/busy?i=${i}`)));
  let peak = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const rows = await h.db
        .select({ id: screenshotRenders.id })
        .from(screenshotRenders)
        .where(
          and(
            eq(screenshotRenders.orgId, a.org.id),
            eq(screenshotRenders.status, "pending"),
            isNotNull(screenshotRenders.dispatchedAt),
          ),
        );
      peak = Math.max(peak, rows.length);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  // Both workers are on A's pages before B asks.
  await until(async () => (await rowOf(hanging[1])).stage === "film", 60_000);

  const t0 = performance.now();
  const bId = await queueShot(b, pages.url("/?behind=1"));
  await until(async () => (await rowOf(bId)).attempts >= 1, 30 * 60_000);
  const waitedForWorker = performance.now() - t0;
  const bRender = await settled(bId);
  const behind = performance.now() - t0;
  const aLeft = (await Promise.all(hanging.map(async (id) => (await rowOf(id)).status))).filter(
    (s) => s === "pending",
  ).length;

  if (process.env.BENCH_DRAIN === "0") {
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `per organization ${h.ctx.config.renderOrgConcurrency}, deadline ${s(deadline)}: B alone ${s(normal)}; ` +
        `B behind the flood ${s(behind)} (waited ${s(waitedForWorker)} for a worker); A pending then: ${aLeft}`,
    );
    process.exit(0);
  }
  const ends = await Promise.all(hanging.map((id) => settled(id)));
  const drained = performance.now() - floodStart;
  watching = false;
  await watcher;
  const [credits] = await h.db.select().from(organizations).where(eq(organizations.id, a.org.id));
  const refunds = await h.db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.orgId, a.org.id), eq(creditLedger.reason, "screenshot_refund")));

  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const target = normal + deadline;
  console.log(
    `queue: ${redisUrl ? "bullmq" : "in-process"}; daemon concurrency ${h.ctx.config.renderConcurrency}, ` +
      `per organization ${h.ctx.config.renderOrgConcurrency}, page deadline ${s(deadline)} (defaults: ` +
      `${defaults.renderConcurrency}, ${defaults.renderOrgConcurrency}, ${s(defaults.renderPageDeadlineMs)})`,
  );
  console.log(`B alone (best of 3): ${s(normal)}  [${alone.map(s).join(", ")}]`);
  console.log(
    `B behind A's ${FLOOD} hanging renders: ${s(behind)} (${bRender.status}); ` +
      `target < normal + one deadline = ${s(target)}: ${behind < target ? "MET" : "MISSED"}; ` +
      `it waited ${s(waitedForWorker)} for a worker, then rendered in ${s(behind - waitedForWorker)}; A still pending then: ${aLeft}`,
  );
  console.log(
    `A's flood: drained in ${s(drained)}; ${ends.filter((r) => r.status === "failed").length}/${FLOOD} failed, ` +
      `tries per render: ${[...new Set(ends.map((r) => r.attempts))].join(",")}; peak in progress: ${peak}; ` +
      `refunds: ${refunds.length}, credits back: ${credits.credits}/${10 * FLOOD}`,
  );
  const errors = new Map<string, number>();
  for (const r of ends) errors.set(r.error ?? "", (errors.get(r.error ?? "") ?? 0) + 1);
  for (const [e, n] of errors) console.log(`A's errors: ${n} × "${e}"`);
} finally {
  await daemon.stop();
  await h.close();
  pages.stop();
  silent.stop(true);
}
