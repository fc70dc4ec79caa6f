import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isUniqueViolation, pages } from "@site/db";
import { asc, eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;

let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

const newSite = async () => (await h.newSite(owner.key, { name: "Order" })).id;
const createPage = (siteId: string, path: string, position?: number) =>
  h.call("POST", `/api/v1/sites/${siteId}/pages`, {
    key: owner.key,
    body: { path, title: path, content: `# ${path}`, ...(position !== undefined ? { position } : {}) },
  });
/**
 * createPage, again while the parser pool refuses it: one organization's page writes beyond its share of
 * the pool are refused with 429 (decision 0612), which a burst on a busy machine meets; the page lands.
 */
async function createLanding(siteId: string, path: string, position?: number): Promise<Response> {
  for (let i = 0; ; i++) {
    const res = await createPage(siteId, path, position);
    if (res.status !== 429 || i === 50) return res;
    await Bun.sleep(100);
  }
}
const reorder = (siteId: string, pageIds: string[]) =>
  h.call("PUT", `/api/v1/sites/${siteId}/pages/order`, { key: owner.key, body: { pageIds } });
const stored = (siteId: string) =>
  h.db
    .select({ id: pages.id, path: pages.path, position: pages.position })
    .from(pages)
    .where(eq(pages.siteId, siteId))
    .orderBy(asc(pages.position));

describe("page order", () => {
  test("keeps the auth rules", async () => {
    const siteId = await newSite();
    await expectAuthRules(h, {
      method: "PUT",
      path: `/api/v1/sites/${siteId}/pages/order`,
      scope: "content:write",
      body: { pageIds: [] },
    });
  });

  test("new pages go after the last one; a reorder is one write giving positions 0..n-1", async () => {
    const siteId = await newSite();
    for (const p of ["/a", "/b", "/c"]) expect((await createPage(siteId, p)).status).toBe(201);
    const before = await stored(siteId);
    expect(before.map((p) => [p.path, p.position])).toEqual([
      ["/", 0],
      ["/a", 1],
      ["/b", 2],
      ["/c", 3],
    ]);
    const ids = before.map((p) => p.id).reverse();
    const res = await reorder(siteId, ids);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.pages.map((p: Json) => [p.path, p.position])).toEqual([
      ["/c", 0],
      ["/b", 1],
      ["/a", 2],
      ["/", 3],
    ]);
    expect((await stored(siteId)).map((p) => p.id)).toEqual(ids);
  });

  test("missing, unknown and repeated ids are a 400 naming them, and nothing changes", async () => {
    const siteId = await newSite();
    await createPage(siteId, "/a");
    await createPage(siteId, "/b");
    const [home, a, b] = (await stored(siteId)).map((p) => p.id) as [string, string, string];
    const stranger = "00000000-0000-4000-8000-000000000000";
    const cases: [string[], string][] = [
      [[b, a], home],
      [[b, a, home, stranger], stranger],
      [[b, a, home, a], a],
      [[b, a, home, "not-an-id"], "not-an-id"],
    ];
    for (const [ids, named] of cases) {
      const res = await reorder(siteId, ids);
      expect(res.status).toBe(400);
      const err = ((await res.json()) as Json).error;
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(err.details.flatMap((d: Json) => d.ids)).toContain(named);
      expect(err.message).toContain(named);
    }
    expect((await stored(siteId)).map((p) => p.id)).toEqual([home, a, b]);
  });

  test("a page created or moved to a taken position pushes the rest down, positions stay unique", async () => {
    const siteId = await newSite();
    await createPage(siteId, "/a");
    await createPage(siteId, "/b");
    expect((await createPage(siteId, "/first", 0)).status).toBe(201);
    expect((await stored(siteId)).map((p) => [p.path, p.position])).toEqual([
      ["/first", 0],
      ["/", 1],
      ["/a", 2],
      ["/b", 3],
    ]);
    const b = (await stored(siteId)).find((p) => p.path === "/b")!;
    const moved = await h.call("PATCH", `/api/v1/sites/${siteId}/pages/${b.id}`, {
      key: owner.key,
      body: { position: 1 },
    });
    expect(moved.status).toBe(200);
    expect((await stored(siteId)).map((p) => [p.path, p.position])).toEqual([
      ["/first", 0],
      ["/b", 1],
      ["/", 2],
      ["/a", 3],
    ]);
    const negative = await createPage(siteId, "/neg", -1);
    expect(negative.status).toBe(400);
  });

  test("racing creates and reorders never leave two pages at one position", async () => {
    const siteId = await newSite();
    for (let i = 0; i < 5; i++) await createPage(siteId, `/seed-${i}`);
    const ids = (await stored(siteId)).map((p) => p.id);
    const results = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => createLanding(siteId, `/race-${i}`)),
      ...Array.from({ length: 4 }, (_, i) => reorder(siteId, i % 2 ? [...ids].reverse() : ids)),
      ...Array.from({ length: 4 }, (_, i) => createLanding(siteId, `/at-${i}`, i)),
    ]);
    // Creates always land; a reorder that lost the race to a create is refused as incomplete.
    expect(results.slice(0, 12).map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(results.slice(16).map((r) => r.status)).toEqual(Array(4).fill(201));
    for (const r of results.slice(12, 16)) expect([200, 400]).toContain(r.status);
    const rows = await stored(siteId);
    expect(rows).toHaveLength(6 + 12 + 4);
    expect(new Set(rows.map((r) => r.position)).size).toBe(rows.length);
  });

  test("uniqueness is a database constraint, not luck", async () => {
    const siteId = await newSite();
    const [home] = await stored(siteId);
    let error: unknown = null;
    try {
      await h.db
        .insert(pages)
        .values({ siteId, path: "/dup", title: "Dup", content: "", position: home!.position });
    } catch (err) {
      error = err;
    }
    expect(isUniqueViolation(error, "pages_site_position_unique")).toBe(true);
  });

  test("another organization's site answers 404", async () => {
    const siteId = await newSite();
    const stranger = await h.seedOrg();
    const res = await h.call("PUT", `/api/v1/sites/${siteId}/pages/order`, {
      key: stranger.key,
      body: { pageIds: (await stored(siteId)).map((p) => p.id) },
    });
    expect(res.status).toBe(404);
  });
});
