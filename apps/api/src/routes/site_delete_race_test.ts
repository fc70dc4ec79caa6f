import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Issue 38, "Quota released twice": DELETE /sites/<id> racing DELETE /sites/<id>/media/<mid>, and an
// upload landing while its site is deleted, through app.handle on a real PostgreSQL. The contract's
// rule (CONTRACT.md "One site, deleting files…"): storage used always equals the bytes of live files.
// The race is made certain, not left to timing (decision 0031): another connection holds the
// organization's row until both requests wait for a lock, then lets go; the request that asked first
// goes first. Rounds alternate which one that is.

type Json = any;
let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

/** An organization's counter and the bytes of its live files (site files of live sites, social files). */
async function usedAndLive(orgId: string): Promise<{ used: number; live: number }> {
  const [row] = await h.sql<{ used: string; live: string }[]>`
    select o.storage_used_bytes::text as used,
      (coalesce((select sum(f.size) from media_files f join sites s on s.id = f.site_id
                  where s.org_id = o.id and s.deleted_at is null), 0)
       + coalesce((select sum(m.size) from social_media m
                  where m.org_id = o.id and m.status = 'ready' and m.source <> 'site'), 0))::text as live
    from organizations o where o.id = ${orgId}`;
  return { used: Number(row!.used), live: Number(row!.live) };
}

/** Sessions of the test database waiting for a lock in a statement that contains `marker`. */
const lockWaiters = async (marker: string) =>
  (
    await h.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and strpos(query, ${marker}) > 0`
  )[0]!.n;

/** The statement of lockOrg (a site's delete) and that of lockSiteOrg (a file's delete, a landing). */
const LOCK_ORG = 'from "organizations" where';
const LOCK_SITE_ORG = 'from "sites" inner join "organizations"';

/**
 * Holds the organization's row from another connection; `queue(start, marker)` starts a request and
 * returns (its answer to come) once it waits for the lock in its statement containing `marker`;
 * `release()` lets them go.
 */
async function holdOrg(orgId: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let held!: () => void;
  const isHeld = new Promise<void>((r) => {
    held = r;
  });
  const holder = h.sql.begin(async (s) => {
    await s`select id from organizations where id = ${orgId} for update`;
    held();
    await released;
  });
  await isHeld;
  const waiting = new Map<string, number>();
  return {
    async queue<T>(start: () => Promise<T>, marker: string): Promise<{ answer: Promise<T> }> {
      let done = false;
      const p = start().finally(() => {
        done = true;
      });
      const n = (waiting.get(marker) ?? 0) + 1;
      waiting.set(marker, n);
      while (!done && (await lockWaiters(marker)) < n) await Bun.sleep(5);
      expect(done).toBe(false);
      return { answer: p };
    },
    async release() {
      release();
      await holder;
    },
  };
}

/** An organization with a site it keeps (one file) and a site about to be deleted (two files). */
async function orgWithSites() {
  const owner = await h.seedOrg({ siteLimit: 10 });
  const kept = await h.newSite(owner.key);
  const doomed = await h.newSite(owner.key);
  const add = (siteId: string, size: number) =>
    addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png", { size }), source: "upload" });
  await add(kept.id, 3000);
  await add(doomed.id, 5000);
  await add(doomed.id, 7000);
  const list = await h.call("GET", `/api/v1/sites/${doomed.id}/media`, { key: owner.key });
  const ids = ((await list.json()) as Json).images.map((i: Json) => i.id as string);
  expect(ids).toHaveLength(2);
  return { owner, kept, doomed, mediaId: ids[0] as string };
}

describe("storage used equals live bytes when deletes race (12 rounds each)", () => {
  test("DELETE /sites/<id> racing DELETE /sites/<id>/media/<mid>: the file's bytes are freed once", async () => {
    const seen: string[] = [];
    for (let round = 0; round < 12; round++) {
      const { owner, doomed, mediaId } = await orgWithSites();
      const before = await usedAndLive(owner.org.id);
      expect(before.used).toBe(before.live);
      const siteDelete = () => h.call("DELETE", `/api/v1/sites/${doomed.id}`, { key: owner.key });
      const fileDelete = () =>
        h.call("DELETE", `/api/v1/sites/${doomed.id}/media/${mediaId}`, { key: owner.key });
      const hold = await holdOrg(owner.org.id);
      const siteFirst = round % 2 === 0;
      const first = siteFirst
        ? await hold.queue(siteDelete, LOCK_ORG)
        : await hold.queue(fileDelete, LOCK_SITE_ORG);
      const second = siteFirst
        ? await hold.queue(fileDelete, LOCK_SITE_ORG)
        : await hold.queue(siteDelete, LOCK_ORG);
      await hold.release();
      const [a, b] = await Promise.all([first.answer, second.answer]);
      const [site, file] = siteFirst ? [a, b] : [b, a];
      expect(site.status).toBe(204);
      // The file's delete either went first (204) or found its site gone (404).
      expect([204, 404]).toContain(file.status);
      seen.push(`${siteFirst ? "site" : "file"} first: file ${file.status}`);
      const after = await usedAndLive(owner.org.id);
      expect({ round, ...after }).toEqual({ round, used: after.live, live: after.live });
      // The kept site's file is all that is left.
      expect(after.live).toBeGreaterThan(0);
    }
    expect(new Set(seen)).toEqual(new Set(["site first: file 404", "file first: file 204"]));
  }, 120_000);

  test("an upload landing while its site is deleted: counted and freed with the site, or refused", async () => {
    for (let round = 0; round < 12; round++) {
      const { owner, doomed } = await orgWithSites();
      const bytes = sampleImage("png", { size: 4000 });
      const prepared = await h.call("POST", `/api/v1/sites/${doomed.id}/media/upload`, {
        key: owner.key,
        body: { contentType: "image/png", size: bytes.length },
      });
      expect(prepared.status).toBe(201);
      const { upload, path } = (await prepared.json()) as Json;
      const land = () =>
        h.app.handle(
          new Request(`http://localhost${new URL(upload.url).pathname}${new URL(upload.url).search}`, {
            method: "PUT",
            headers: upload.headers,
            body: bytes,
          }),
        );
      const siteDelete = () => h.call("DELETE", `/api/v1/sites/${doomed.id}`, { key: owner.key });
      const hold = await holdOrg(owner.org.id);
      const siteFirst = round % 2 === 0;
      const first = siteFirst
        ? await hold.queue(siteDelete, LOCK_ORG)
        : await hold.queue(land, LOCK_SITE_ORG);
      const second = siteFirst
        ? await hold.queue(land, LOCK_SITE_ORG)
        : await hold.queue(siteDelete, LOCK_ORG);
      await hold.release();
      const [a, b] = await Promise.all([first.answer, second.answer]);
      const site = siteFirst ? a : b;
      expect(site.status).toBe(204);
      const after = await usedAndLive(owner.org.id);
      expect({ round, ...after }).toEqual({ round, used: after.live, live: after.live });
      // Refused after the delete: its bytes are not kept either.
      if (siteFirst) expect(await h.ctx.store.head(path)).toBeNull();
    }
  }, 120_000);
});
