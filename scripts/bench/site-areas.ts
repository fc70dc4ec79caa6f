/**
 * Bench: the site-building areas, through app.handle on a real database (TEST_DATABASE_URL, default the
 * machine's PostgreSQL). Targets:
 * - collection listing at 10,000 items: last page / first page time under 1.5;
 * - public site read (layout + chrome + a 100-link navigation, translated and signed): p50 under 10 ms;
 * - reorder of 500 pages: under 200 ms;
 * - link translation of a page with 1,000 links: under 20 ms.
 *   bun scripts/bench/site-areas.ts
 */

import { buildTestApp } from "@site/api/testing";
import { encodePositionCursor } from "@site/domain/core";
import { addLibraryFile } from "@site/domain/media";
import { linkSpansOf, loadPageIndex, readPageLinks, reorderPages, siteById } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { sql } from "drizzle-orm";

type Json = any;
const h = await buildTestApp();

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const p = (q: number) => s[Math.floor(q * (s.length - 1))]!;
  return { p50: p(0.5), p95: p(0.95), max: s[s.length - 1]! };
}
const fmt = (n: number) => n.toFixed(2);
/** CPU milliseconds this process spent per call of `fn` over `n` calls: what the API itself costs, whatever else loads the machine. */
async function cpuPerCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}
async function timed(fn: () => Promise<Response>): Promise<number> {
  const t0 = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status >= 300) throw new Error(`answered ${res.status}`);
  return ms;
}

try {
  const owner = await h.seedOrg({ siteLimit: 100 });
  const call = (method: string, path: string, body?: unknown) =>
    h.call(method, path, { key: owner.key, body });
  const newSite = async (slug: string) =>
    ((await (await call("POST", "/api/v1/sites", { name: slug, slug })).json()) as Json).site.id as string;

  // 1. Collection listing at 10,000 items: the last page costs what the first does.
  {
    const siteId = await newSite("bench-collection");
    const photo = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("jpeg"), source: "upload" });
    await call("PUT", `/api/v1/sites/${siteId}/collections/team`, {
      name: "Team",
      fields: [
        { key: "name", type: "text", required: true },
        { key: "photo", type: "image" },
        { key: "profile", type: "link" },
        { key: "rank", type: "number" },
      ],
    });
    await h.db.execute(sql`
      insert into collection_items (collection_id, position, values)
      select c.id, i - 1, jsonb_build_object('name', 'Person ' || i, 'photo', ${photo.url}::text, 'profile', '/', 'rank', i)
      from collections c, generate_series(1, 10000) i where c.site_id = ${siteId}::uuid`);
    await h.db.execute(sql`analyze collection_items`);
    console.log("seeded a collection of 10,000 items (an image, a link, a number each)");
    const base = `/api/v1/sites/${siteId}/collections/team/items?limit=50`;
    const last = `${base}&cursor=${encodePositionCursor(9949)}`;
    const check = (await (await call("GET", last)).json()) as Json;
    if (check.items.length !== 50 || check.nextCursor !== null)
      throw new Error("the last page is not the last");
    for (let i = 0; i < 30; i++) {
      await timed(() => call("GET", base));
      await timed(() => call("GET", last));
    }
    const first: number[] = [];
    const end: number[] = [];
    for (let i = 0; i < 200; i++) {
      first.push(await timed(() => call("GET", base)));
      end.push(await timed(() => call("GET", last)));
    }
    const f = stats(first);
    const l = stats(end);
    const cpuFirst = await cpuPerCall(100, async () => (await call("GET", base)).arrayBuffer());
    const cpuLast = await cpuPerCall(100, async () => (await call("GET", last)).arrayBuffer());
    console.log(
      `collection listing (10,000 items, limit 50, images signed): first page p50 ${fmt(f.p50)} ms, last page p50 ${fmt(l.p50)} ms, ratio ${(l.p50 / f.p50).toFixed(2)} (target < 1.5); API CPU ${fmt(cpuFirst)} / ${fmt(cpuLast)} ms a page`,
    );
  }

  // 2. Public site read: layout with a 100-link navigation (page references), logo, German chrome.
  {
    const siteId = await newSite("bench-public");
    const logo = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    await h.db.execute(sql`
      insert into pages (site_id, path, title, content, position)
      select ${siteId}::uuid, '/page-' || i, 'Page ' || i, '# Page ' || i, i from generate_series(1, 100) i`);
    const navigation = Array.from({ length: 50 }, (_, i) => ({
      label: `Section ${i}`,
      href: `/page-${i + 1}`,
      children: [{ label: `Sub ${i}`, href: `/page-${i + 51}#top` }],
    }));
    const put = await call("PUT", `/api/v1/sites/${siteId}/layout`, {
      layout: { logo: logo.url, header: { navigation }, footer: { text: "Bench", links: [] } },
    });
    if (put.status !== 200) throw new Error(`layout answered ${put.status}: ${await put.text()}`);
    await call("PUT", `/api/v1/sites/${siteId}/chrome/de`, {
      strings: { "nav.home": "Startseite", "footer.copyright": "Alle Rechte vorbehalten." },
    });
    await call("POST", `/api/v1/sites/${siteId}/publish`);
    const read = () => h.call("GET", "/api/v1/public/sites/bench-public?locale=de-CH");
    const body = (await (await read()).json()) as Json;
    if (
      body.layout.header.navigation[49].children[0].href !== "/page-100#top" ||
      !body.layout.logo.includes("k=v.")
    )
      throw new Error("the public read is not translated and signed");
    for (let i = 0; i < 100; i++) await timed(read);
    const lat: number[] = [];
    for (let i = 0; i < 1000; i++) lat.push(await timed(read));
    const s = stats(lat);
    const cpu = await cpuPerCall(300, async () => (await read()).arrayBuffer());
    console.log(
      `public site read (100-link navigation translated, logo signed, chrome de-CH → de): p50 ${fmt(s.p50)} ms, p95 ${fmt(s.p95)} ms, API CPU ${fmt(cpu)} ms a read (target p50 < 10 ms)`,
    );
  }

  // 3. Reorder of 500 pages: one atomic write.
  {
    const siteId = await newSite("bench-reorder");
    await h.db.execute(sql`
      insert into pages (site_id, path, title, content, position)
      select ${siteId}::uuid, '/p-' || i, 'Page ' || i, '# Page ' || i, i from generate_series(1, 499) i`);
    const ids = (
      (await h.db.execute(
        sql`select id from pages where site_id = ${siteId}::uuid order by position`,
      )) as unknown as {
        id: string;
      }[]
    ).map((r) => r.id);
    const domain: number[] = [];
    const route: number[] = [];
    const site = await siteById(h.ctx, siteId);
    for (let i = 0; i < 10; i++) {
      const order = i % 2 ? [...ids] : [...ids].reverse();
      const t0 = performance.now();
      await reorderPages(h.ctx, site, { pageIds: order });
      domain.push(performance.now() - t0);
      route.push(await timed(() => call("PUT", `/api/v1/sites/${siteId}/pages/order`, { pageIds: order })));
    }
    const d = stats(domain.slice(2));
    const r = stats(route.slice(2));
    console.log(
      `reorder of 500 pages: the write p50 ${fmt(d.p50)} ms (max ${fmt(d.max)}); PUT …/pages/order with its 500-page answer p50 ${fmt(r.p50)} ms (target < 200 ms)`,
    );
  }

  // 4. Link translation of a page with 1,000 links.
  {
    const siteId = await newSite("bench-links");
    await h.db.execute(sql`
      insert into pages (site_id, path, title, content, position)
      select ${siteId}::uuid, '/target-' || i, 'T' || i, '# T', i from generate_series(1, 50) i`);
    // 500 lines, two links each: a Markdown link with an anchor and a JSX href.
    const content = Array.from(
      { length: 500 },
      (_, i) => `- [Link ${i}](/target-${(i % 50) + 1}#s${i}) and <Card href="/target-${(i % 50) + 1}" />`,
    ).join("\n");
    const t0 = performance.now();
    const created = await call("POST", `/api/v1/sites/${siteId}/pages`, {
      path: "/links",
      title: "Links",
      content,
    });
    const writeMs = performance.now() - t0;
    const page = ((await created.json()) as Json).page;
    const [row] = (await h.db.execute(
      sql`select content, links from pages where id = ${page.id}::uuid`,
    )) as unknown as {
      content: string;
      links: unknown;
    }[];
    const spans = linkSpansOf(row!.links, row!.content);
    if (spans.length !== 1000) throw new Error(`expected 1,000 stored links, got ${spans.length}`);
    const index = await loadPageIndex(h.db, siteId);
    const splice: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const a = performance.now();
      const out = readPageLinks(row!.content, spans, index);
      splice.push(performance.now() - a);
      if (i === 0 && out !== content) throw new Error("translation does not give back the written content");
    }
    const withIndex: number[] = [];
    for (let i = 0; i < 300; i++) {
      const a = performance.now();
      readPageLinks(row!.content, spans, await loadPageIndex(h.db, siteId));
      withIndex.push(performance.now() - a);
    }
    for (let i = 0; i < 20; i++) await timed(() => call("GET", `/api/v1/sites/${siteId}/pages/${page.id}`));
    const reads: number[] = [];
    for (let i = 0; i < 200; i++)
      reads.push(await timed(() => call("GET", `/api/v1/sites/${siteId}/pages/${page.id}`)));
    const hrefs = Array.from({ length: 1000 }, (_, i) =>
      i % 3 === 0 ? `page:${page.id}#x` : `/target-${(i % 50) + 1}`,
    );
    for (let i = 0; i < 20; i++)
      await timed(() => call("POST", `/api/v1/sites/${siteId}/links/translate`, { hrefs }));
    const translate: number[] = [];
    for (let i = 0; i < 200; i++)
      translate.push(await timed(() => call("POST", `/api/v1/sites/${siteId}/links/translate`, { hrefs })));
    console.log(
      [
        `link translation of a page with 1,000 links (target < 20 ms):`,
        `  splice by stored ranges p50 ${fmt(stats(splice).p50)} ms; with the page index query p50 ${fmt(stats(withIndex).p50)} ms`,
        `  GET the page through app.handle (translate, sanitize and sign, scan cached) p50 ${fmt(stats(reads).p50)} ms`,
        `  POST …/links/translate with 1,000 hrefs p50 ${fmt(stats(translate).p50)} ms`,
        `  (writing it: parse in the scan worker and store references ${fmt(writeMs)} ms, once)`,
      ].join("\n"),
    );
  }
} finally {
  await h.close();
}
