/**
 * Bench: clone a 500-page template (20 KB of MDX each) through the API, and GET /api/v1/sites with 1,000
 * sites. Targets: clone < 2 s; list p50 < 5 ms. Runs on TEST_DATABASE_URL (default: local PostgreSQL).
 *   bun scripts/bench/site-clone.ts
 */

import { buildTestApp } from "@site/api/testing";
import { upsertTemplate } from "@site/domain/sites";
import { sql } from "drizzle-orm";

const h = await buildTestApp();
try {
  const owner = await h.seedOrg({ siteLimit: 5000 });
  const host = (await (
    await h.call("POST", "/api/v1/sites", { key: owner.key, body: { name: "Host", slug: "bench-host" } })
  ).json()) as any;
  const hostId = host.site.id as string;
  await h.db.execute(sql`delete from pages where site_id = ${hostId}`);
  await h.db.execute(sql`
    insert into pages (site_id, path, title, content, position)
    select ${hostId}::uuid, '/page-' || i, 'Page ' || i,
      -- 20 KB of incompressible text per page, so TOAST compression does not flatter the copy
      (select string_agg(md5(random()::text || i || g), ' ') from generate_series(1, 606) g), i
    from generate_series(1, 500) i`);
  await upsertTemplate(h.ctx, { slug: "bench-500", siteId: hostId, name: "Bench 500" });
  console.log("seeded a 500-page template (20 KB each, 10 MB of MDX)");

  const clones: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const res = await h.call("POST", "/api/v1/sites", {
      key: owner.key,
      body: { name: `Clone ${i}`, slug: `bench-clone-${i}`, template: "bench-500" },
    });
    const ms = performance.now() - t0;
    if (res.status !== 201) throw new Error(`clone answered ${res.status}: ${await res.text()}`);
    clones.push(ms);
    console.log(`clone ${i}: ${ms.toFixed(0)} ms`);
  }
  clones.sort((a, b) => a - b);
  console.log(
    `clone of 500 pages: p50 ${clones[2]!.toFixed(0)} ms, max ${clones[4]!.toFixed(0)} ms (target < 2000 ms)`,
  );

  await h.db.execute(sql`
    insert into sites (org_id, name, slug, created_at)
    select ${owner.org.id}::uuid, 'Site ' || i, 'bench-site-' || i, now() - (i || ' seconds')::interval
    from generate_series(1, 1000 - 6) i`);
  for (let i = 0; i < 50; i++) await h.call("GET", "/api/v1/sites?limit=50", { key: owner.key });
  const lat: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    const res = await h.call("GET", "/api/v1/sites?limit=50", { key: owner.key });
    await res.arrayBuffer();
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const p = (q: number) => lat[Math.floor(q * (lat.length - 1))]!.toFixed(2);
  console.log(
    `GET /api/v1/sites (1,000 sites, limit 50): p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, p99 ${p(0.99)} ms (target p50 < 5 ms)`,
  );
} finally {
  await h.close();
}
