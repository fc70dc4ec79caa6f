/**
 * Bench: scheduled social posts going out on time (issue 33), run by hand:
 *   bun scripts/bench/social_schedule.ts [posts=10000] [windowS=60]                 (in-process queue)
 *   REDIS_URL=redis://127.0.0.1:6379 bun scripts/bench/social_schedule.ts [posts]   (BullMQ)
 * On TEST_DATABASE_URL's server (default local PostgreSQL), in a fresh database dropped at the end; the
 * real clock. One organization with one Reddit account on the strict fakes (`@site/social/testing`),
 * every fake call answered after 50 ms (`latencyMs`). `posts` text posts are seeded set-based as
 * scheduled (one target each), their times spread evenly over `windowS` seconds of the real clock from
 * LEAD_S (default 20) seconds ahead; the app's own social publisher (sweep + `social-publish` jobs, as
 * every API process runs it) sends them.
 * Measures:
 *  - lateness per target = its `published_at` (the clock after the platform answered) minus the post's
 *    `scheduled_at`: p50/p95/p99/max; target p99 < 5 s. Also commit lateness (`ended_at`);
 *  - that each post is on the fake platform exactly once;
 *  - another route's latency in the same process: GET /api/v1/sites at RATE (default 20) requests/s, open
 *    loop, BASE_S (default 10) seconds before any publishing load, and from the first post's time until
 *    every target ended: p50/p99.
 */

import { buildTestApp } from "@site/api/testing";
import { createLogger } from "@site/config";
import { createBullQueue } from "@site/queue";
import { startFakePlatforms } from "@site/social/testing";

const POSTS = Number(process.argv[2] ?? 10_000);
const WINDOW_S = Number(process.argv[3] ?? 60);
const LEAD_S = Number(process.env.LEAD_S ?? 20);
const BASE_S = Number(process.env.BASE_S ?? 10);
const RATE = Number(process.env.RATE ?? 20);
const LATENCY_MS = 50;
const redisUrl = process.env.REDIS_URL || null;

const fake = startFakePlatforms({ latencyMs: LATENCY_MS });
const h = await buildTestApp({
  env: { ...fake.env },
  queue: redisUrl
    ? createBullQueue({
        redisUrl,
        log: createLogger("silent" as never),
        prefix: `bench-sched-${Date.now().toString(36)}`,
      })
    : undefined,
});
const log = (msg: string) =>
  console.log(`[bench social_schedule ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** GET /api/v1/sites at RATE requests/s (open loop, as clients arrive) until `stop()`; the latencies. */
async function routeLoad(key: string, stop: () => boolean) {
  const lat: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; !stop(); i++) {
    const sent = performance.now();
    pending.push(
      h.call("GET", "/api/v1/sites", { key }).then(async (res) => {
        await res.arrayBuffer();
        if (res.status !== 200) errors++;
        lat.push(performance.now() - sent);
      }),
    );
    await Bun.sleep(Math.max(0, t0 + ((i + 1) * 1000) / RATE - performance.now()));
  }
  await Promise.all(pending);
  return { lat, errors };
}

try {
  const { org, key } = await h.seedOrg();
  for (let i = 0; i < 5; i++) {
    const res = await h.call("POST", "/api/v1/sites", {
      key,
      body: { name: `S${i}`, slug: `sched-${i}-${Date.now()}` },
    });
    if (res.status !== 201) throw new Error(`site: ${res.status} ${await res.text()}`);
  }
  const acc = await h.call("POST", "/api/v1/social/accounts", {
    key,
    body: { platform: "reddit", accountId: "bench-reddit", accessToken: `tok-reddit-${Math.random()}` },
  });
  if (acc.status !== 201) throw new Error(`account: ${acc.status} ${await acc.text()}`);
  const accountId = ((await acc.json()) as { account: { id: string } }).account.id;
  log(
    `queue: ${redisUrl ? "bullmq" : "in-process"}; fake latency ${LATENCY_MS} ms; ${POSTS} posts over ${WINDOW_S} s`,
  );

  // 1. The route alone (the publisher runs but has nothing due).
  const until = performance.now() + BASE_S * 1000;
  const base = await routeLoad(key, () => performance.now() > until);
  log(
    `GET /api/v1/sites alone: ${base.lat.length} requests, p50 ${ms(pct(base.lat, 50))}, p99 ${ms(pct(base.lat, 99))}, errors ${base.errors}`,
  );

  // 2. Seed the scheduled posts, spread over the window from LEAD_S ahead (the real clock).
  const start = Date.now() + LEAD_S * 1000;
  const stepMs = (WINDOW_S * 1000) / POSTS;
  let t = performance.now();
  await h.sql.begin(async (tx) => {
    await tx.unsafe("set local statement_timeout = 0");
    await tx`
      with p as (
        insert into social_posts (org_id, content, status, scheduled_at, created_at, updated_at)
        select ${org.id}, 'Scheduled post ' || g || E'\nbody of post ' || g, 'scheduled',
               to_timestamp((${start}::float8 + (g - 1) * ${stepMs}::float8) / 1000.0), now(), now()
        from generate_series(1, ${POSTS}) g
        returning id, scheduled_at)
      insert into social_targets (post_id, account_id, platform, status, next_try_at)
      select p.id, ${accountId}::uuid, 'reddit', 'scheduled', p.scheduled_at from p`;
  });
  await h.sql`analyze social_posts`;
  await h.sql`analyze social_targets`;
  log(
    `seeded ${POSTS} scheduled posts in ${ms(performance.now() - t)}; first due in ${((start - Date.now()) / 1000).toFixed(1)} s`,
  );
  if (Date.now() > start) log("WARNING: seeding ran past the first post's time; lateness includes it");

  // 3. The window: the route under the publishing load, progress every 5 s, until all ended or 3× late.
  const giveUp = start + WINDOW_S * 1000 + Math.max(60_000, WINDOW_S * 2000);
  let finished = false;
  const counts = async (): Promise<Record<string, number>> => {
    const rows = await h.sql<{ status: string; n: number }[]>`
      select t.status, count(*)::int as n from social_targets t join social_posts p on p.id = t.post_id
      where p.org_id = ${org.id} group by t.status`;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  await Bun.sleep(Math.max(0, start - Date.now()));
  const loaded = routeLoad(key, () => finished);
  t = performance.now();
  for (;;) {
    await Bun.sleep(5000);
    const c = await counts();
    const open = (c.scheduled ?? 0) + (c.publishing ?? 0);
    log(`t+${((Date.now() - start) / 1000).toFixed(0)} s: ${JSON.stringify(c)}`);
    if (open === 0 || Date.now() > giveUp) break;
  }
  const drainS = (performance.now() - t) / 1000;
  finished = true;
  const under = await loaded;

  // 4. Lateness from the database: the platform's answer (published_at) and the commit (ended_at).
  const rows = await h.sql<{ pub: number | null; ended: number | null }[]>`
    select extract(epoch from (t.published_at - p.scheduled_at)) * 1000 as pub,
           extract(epoch from (t.ended_at - p.scheduled_at)) * 1000 as ended
    from social_targets t join social_posts p on p.id = t.post_id
    where p.org_id = ${org.id} and t.status = 'published'`;
  const pub = rows.map((r) => Number(r.pub));
  const ended = rows.map((r) => Number(r.ended));
  // Every submit that reached the fake made one post (no duplicate submits: each post exactly once).
  const onPlatform = fake.requests.filter(
    (r) => r.platform === "reddit" && r.path.includes("api/submit"),
  ).length;
  const c = await counts();
  console.log(
    `\n--- results (${redisUrl ? "BullMQ on Redis" : "in-process queue"}, fake platform answering in ${LATENCY_MS} ms, real clock) ---`,
  );
  console.log(
    `posts ${POSTS} over ${WINDOW_S} s (${(POSTS / WINDOW_S).toFixed(0)}/s); targets ${JSON.stringify(c)}; on the platform ${onPlatform}`,
  );
  if (pub.length) {
    console.log(
      `lateness (published_at − scheduled_at): p50 ${ms(pct(pub, 50))}, p95 ${ms(pct(pub, 95))}, p99 ${ms(pct(pub, 99))}, max ${ms(Math.max(...pub))}  (target p99 < 5000 ms)`,
    );
    console.log(
      `lateness to commit (ended_at − scheduled_at): p50 ${ms(pct(ended, 50))}, p99 ${ms(pct(ended, 99))}, max ${ms(Math.max(...ended))}`,
    );
  }
  console.log(
    `from the first post's time until every target ended: ${drainS.toFixed(1)} s (checked every 5 s)`,
  );
  console.log(
    `GET /api/v1/sites (${RATE}/s open loop, same process): alone p50 ${ms(pct(base.lat, 50))} p99 ${ms(pct(base.lat, 99))} (${base.lat.length} req); ` +
      `under publishing p50 ${ms(pct(under.lat, 50))} p99 ${ms(pct(under.lat, 99))} (${under.lat.length} req, ${under.errors} errors)`,
  );
  if (onPlatform !== POSTS) console.log(`NOTE: ${onPlatform} posts on the platform for ${POSTS} scheduled`);
} finally {
  await h.close();
  fake.close();
}
