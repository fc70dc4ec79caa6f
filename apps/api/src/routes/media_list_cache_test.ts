import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Context } from "@site/domain/core";
import { listLibrary, MEMBER_GRANT_SECONDS, readGrant } from "@site/domain/media";
import { siteById } from "@site/domain/sites";
import { sql } from "drizzle-orm";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../../testing/mod.ts";

type Json = any;

// Decision 0810: a built page of the library is served again only while the site's media version
// (moved by triggers, whatever writes media_files) and the grants' minute are unchanged.
describe("media list: a kept page is never served after the library changed", () => {
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  let other: ApiProcess;
  const queries: string[] = [];
  beforeAll(async () => {
    h = await buildTestApp({ onQuery: (q) => queries.push(q) });
    owner = await h.seedOrg({ siteLimit: 20 });
    other = await spawnApi({ DATABASE_URL: h.databaseUrl, LOG_LEVEL: "error" });
  }, 60_000);
  afterAll(async () => {
    await other?.kill();
    await h.close();
  });

  /** Inserts `n` library rows by plain SQL (no application code runs: only the triggers). */
  const insertFiles = async (siteId: string, n: number, stem: string) => {
    await h.db.execute(sql`
      insert into media_files (site_id, key, name, content_type, size, source, created_at)
      select ${siteId}::uuid, 'site-media/' || ${siteId} || '/' || ${stem} || i || '.png', ${stem} || i || '.png',
        'image/png', 100 + i, 'upload', now() - (i || ' seconds')::interval
      from generate_series(1, ${n}) i`);
  };
  const names = async (siteId: string, q = "", via: (p: string) => Promise<Response> = listHere) => {
    const res = await via(`/api/v1/sites/${siteId}/media${q}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    return { names: (body.images as Json[]).map((i) => i.name as string), body };
  };
  const listHere = (path: string) => h.call("GET", path, { key: owner.key });
  const listThere = (path: string) =>
    fetch(`${other.url}${path}`, { headers: { authorization: `Bearer ${owner.key}` } });

  test("a repeat read with nothing changed is one small query; the page is not read again", async () => {
    const site = await h.newSite(owner.key);
    await insertFiles(site.id, 3, "a");
    await names(site.id); // warms the key cache and builds the page (one round trip)
    queries.length = 0;
    const first = await names(site.id);
    expect(first.names).toEqual(["a1.png", "a2.png", "a3.png"]);
    expect(queries).toHaveLength(1);
    expect(queries[0]).toContain("site_media_versions");
    expect(queries[0]).not.toContain("json_agg");
  });

  test("rows inserted, changed and deleted by plain SQL show on the very next read, here and in another process", async () => {
    const site = await h.newSite(owner.key);
    await insertFiles(site.id, 2, "b");
    expect((await names(site.id)).names).toEqual(["b1.png", "b2.png"]);
    expect((await names(site.id, "", listThere)).names).toEqual(["b1.png", "b2.png"]);

    await h.db.execute(sql`insert into media_files (site_id, key, name, content_type, size, source)
      values (${site.id}::uuid, ${`site-media/${site.id}/new.png`}, 'new.png', 'image/png', 5, 'upload')`);
    expect((await names(site.id)).names).toEqual(["new.png", "b1.png", "b2.png"]);
    expect((await names(site.id, "", listThere)).names).toEqual(["new.png", "b1.png", "b2.png"]);

    await h.db.execute(
      sql`update media_files set size = 777 where name = 'b2.png' and site_id = ${site.id}::uuid`,
    );
    const sizes = async (via: (p: string) => Promise<Response>) =>
      ((await names(site.id, "", via)).body.images as Json[]).map((i) => i.size);
    expect(await sizes(listHere)).toEqual([5, 101, 777]);
    expect(await sizes(listThere)).toEqual([5, 101, 777]);

    await h.db.execute(sql`delete from media_files where name = 'b1.png' and site_id = ${site.id}::uuid`);
    expect((await names(site.id)).names).toEqual(["new.png", "b2.png"]);
    expect((await names(site.id, "", listThere)).names).toEqual(["new.png", "b2.png"]);
  });

  test("a change to one site leaves another site's kept page as it was, and each cursor page is right", async () => {
    const one = await h.newSite(owner.key);
    const two = await h.newSite(owner.key);
    await insertFiles(one.id, 5, "c");
    await insertFiles(two.id, 1, "d");
    const firstPage = await names(one.id, "?limit=2");
    expect(firstPage.names).toEqual(["c1.png", "c2.png"]);
    const cursor = firstPage.body.nextCursor as string;
    expect((await names(one.id, `?limit=2&cursor=${encodeURIComponent(cursor)}`)).names).toEqual([
      "c3.png",
      "c4.png",
    ]);
    expect((await names(two.id)).names).toEqual(["d1.png"]);
    await h.db.execute(sql`delete from media_files where name = 'c3.png' and site_id = ${one.id}::uuid`);
    expect((await names(one.id, `?limit=2&cursor=${encodeURIComponent(cursor)}`)).names).toEqual([
      "c4.png",
      "c5.png",
    ]);
    queries.length = 0;
    expect((await names(two.id)).names).toEqual(["d1.png"]);
    expect(queries.filter((q) => q.includes("json_agg"))).toHaveLength(0); // still the kept page
  });

  test("another organization's key gets 404 for a site whose page is kept; a deleted site is 404", async () => {
    const site = await h.newSite(owner.key);
    await insertFiles(site.id, 1, "e");
    await names(site.id);
    const stranger = await h.seedOrg();
    const foreign = await h.call("GET", `/api/v1/sites/${site.id}/media`, { key: stranger.key });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as Json).error.code).toBe("NOT_FOUND");
    await h.db.execute(sql`delete from sites where id = ${site.id}::uuid`);
    expect((await listHere(`/api/v1/sites/${site.id}/media`)).status).toBe(404);
    expect((await listThere(`/api/v1/sites/${site.id}/media`)).status).toBe(404);
  });

  test("the grants of a kept page are re-minted when their minute passes: always at least 15 minutes left", async () => {
    const site = await h.newSite(owner.key);
    await insertFiles(site.id, 1, "f");
    let now = Date.UTC(2026, 10, 23, 12, 0, 30);
    const ctx = { ...h.ctx, clock: { now: () => new Date(now) } } as Context & { store: typeof h.store };
    const grantOf = (page: Awaited<ReturnType<typeof listLibrary>>) => {
      const url = new URL(page.images[0]!.displayUrl, "http://x");
      return { k: url.searchParams.get("k")!, key: url.pathname.replace(/^\/api\/media\//, "") };
    };
    const expOf = (k: string) => Number(k.split(".")[2]);
    const owned = await siteById(ctx, site.id);
    const a = await listLibrary(ctx, owned, {});
    const b = await listLibrary(ctx, owned, {});
    expect(b).toBe(a); // the kept page itself
    expect(expOf(grantOf(a).k)).toBe(Date.UTC(2026, 10, 23, 12, 16, 0) / 1000);
    now += 40_000; // 12:01:10: the next minute
    const c = await listLibrary(ctx, owned, {});
    expect(c).not.toBe(a);
    const g = grantOf(c);
    expect(expOf(g.k) * 1000 - now).toBeGreaterThanOrEqual(MEMBER_GRANT_SECONDS * 1000);
    expect(readGrant(ctx, g.key, g.k)).toEqual({ kind: "member", siteId: site.id });
  });

  test("a site's media version moves once per statement for each site it touched (triggers)", async () => {
    const site = await h.newSite(owner.key);
    const version = async () =>
      Number(
        (
          (await h.db.execute(
            sql`select coalesce((select version from site_media_versions where site_id = ${site.id}::uuid), 0) as v`,
          )) as unknown as { v: string }[]
        )[0]!.v,
      );
    expect(await version()).toBe(0);
    await insertFiles(site.id, 4, "g");
    expect(await version()).toBe(1);
    await h.db.execute(sql`update media_files set alt = 'x' where site_id = ${site.id}::uuid`);
    expect(await version()).toBe(2);
    await h.db.execute(sql`delete from media_files where site_id = ${site.id}::uuid`);
    expect(await version()).toBe(3);
    await h.db.execute(sql`delete from sites where id = ${site.id}::uuid`);
    const [gone] = (await h.db.execute(
      sql`select count(*)::int as n from site_media_versions where site_id = ${site.id}::uuid`,
    )) as unknown as { n: number }[];
    expect(gone!.n).toBe(0);
  });
});
