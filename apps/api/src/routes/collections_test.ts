import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { collectionItems, collections } from "@site/db";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { asc, eq, sql } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;

let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

const newSite = async () => (await h.newSite(owner.key, { name: "Coll" })).id;
const call = async (method: string, path: string, body?: unknown, key = owner.key) => {
  const res = await h.call(method, path, { key, body });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};
const TEAM = {
  name: "Team",
  fields: [
    { key: "name", type: "text", required: true },
    { key: "role", type: "text" },
    { key: "photo", type: "image" },
    { key: "bio", type: "richtext" },
    { key: "joined", type: "date" },
    { key: "active", type: "boolean" },
    { key: "rank", type: "number" },
    { key: "profile", type: "link" },
  ],
};
async function teamSite() {
  const siteId = await newSite();
  const base = `/api/v1/sites/${siteId}/collections/team`;
  expect((await call("PUT", base, TEAM)).status).toBe(200);
  return { siteId, base };
}
const storedItems = async (siteId: string) => {
  const [c] = await h.db.select().from(collections).where(eq(collections.siteId, siteId));
  return h.db
    .select()
    .from(collectionItems)
    .where(eq(collectionItems.collectionId, c!.id))
    .orderBy(asc(collectionItems.position));
};

describe("collections", () => {
  test("keep the auth rules", async () => {
    const { siteId, base } = await teamSite();
    await expectAuthRules(h, {
      method: "GET",
      path: `/api/v1/sites/${siteId}/collections`,
      scope: "content:read",
    });
    await expectAuthRules(h, { method: "PUT", path: base, scope: "content:write", body: TEAM });
    await expectAuthRules(h, { method: "DELETE", path: base, scope: "content:write" });
    await expectAuthRules(h, { method: "GET", path: `${base}/items`, scope: "content:read" });
    await expectAuthRules(h, {
      method: "POST",
      path: `${base}/items`,
      scope: "content:write",
      body: { values: {} },
    });
    await expectAuthRules(h, {
      method: "PUT",
      path: `${base}/items/order`,
      scope: "content:write",
      body: { itemIds: [] },
    });
  });

  test("a definition is listed with its fields and item count", async () => {
    const { siteId, base } = await teamSite();
    await call("POST", `${base}/items`, { values: { name: "Ada" } });
    const list = await call("GET", `/api/v1/sites/${siteId}/collections`);
    expect(list.status).toBe(200);
    expect(list.body.collections).toEqual([
      {
        key: "team",
        name: "Team",
        fields: TEAM.fields.map((f) => ({ required: false, ...f })),
        itemCount: 1,
      },
    ]);
  });

  test("items: image stored bare and read signed, link stored as a page reference and read as its path", async () => {
    const { siteId, base } = await teamSite();
    const photo = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("webp"), source: "upload" });
    const about = await call("POST", `/api/v1/sites/${siteId}/pages`, {
      path: "/about",
      title: "About",
      content: "# About",
    });
    const created = await call("POST", `${base}/items`, {
      values: {
        name: "Ada Lovelace",
        role: "Engineer",
        photo: photo.url,
        bio: "**First** programmer",
        joined: "1843-07-10",
        active: true,
        rank: 1,
        profile: "/about#ada",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.item).toMatchObject({
      position: 0,
      values: { name: "Ada Lovelace", profile: "/about#ada", rank: 1 },
    });
    expect(created.body.item.values.photo).toStartWith(`${photo.url}?k=m.`);
    const [row] = await storedItems(siteId);
    expect((row!.values as Json).photo).toBe(photo.url);
    expect((row!.values as Json).profile).toBe(`page:${about.body.page.id}#ada`);
    expect((await h.call("GET", created.body.item.values.photo)).status).toBe(200);
    const listed = await call("GET", `${base}/items`);
    expect(listed.body.items[0].values.photo).toStartWith(`${photo.url}?k=m.`);
    expect(listed.body.nextCursor).toBeNull();
  });

  test("wrong values are a 400 naming each field, and nothing is stored", async () => {
    const { siteId, base } = await teamSite();
    const other = await newSite();
    const foreign = await addLibraryFile(h.ctx, {
      siteId: other,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const res = await call("POST", `${base}/items`, {
      values: {
        role: "<b>Boss</b>",
        photo: foreign.url,
        joined: "2024-02-30",
        active: "yes",
        rank: "first",
        profile: "javascript:alert(1)",
        shoeSize: 44,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    const fields = res.body.error.details.map((d: Json) => d.field).sort();
    expect(fields).toEqual(
      [
        "values.active",
        "values.joined",
        "values.name",
        "values.photo",
        "values.profile",
        "values.rank",
        "values.role",
        "values.shoeSize",
      ].sort(),
    );
    const outside = await call("POST", `${base}/items`, {
      values: { name: "X", photo: "https://cdn.example.com/a.png" },
    });
    expect(outside.body.error.details[0]).toMatchObject({ field: "values.photo" });
    expect(await storedItems(siteId)).toHaveLength(0);
  });

  test("PATCH merges values; null clears an optional field and is refused for a required one", async () => {
    const { base } = await teamSite();
    const { body } = await call("POST", `${base}/items`, {
      values: { name: "Ada", role: "Engineer", rank: 3 },
    });
    const id = body.item.id;
    const patched = await call("PATCH", `${base}/items/${id}`, { values: { role: null, active: false } });
    expect(patched.status).toBe(200);
    expect(patched.body.item.values).toEqual({ name: "Ada", rank: 3, active: false });
    const bad = await call("PATCH", `${base}/items/${id}`, { values: { name: null } });
    expect([bad.status, bad.body.error.details[0].field]).toEqual([400, "values.name"]);
    expect(
      (await call("PATCH", `${base}/items/00000000-0000-4000-8000-000000000000`, { values: {} })).status,
    ).toBe(404);
    expect((await call("DELETE", `${base}/items/${id}`)).status).toBe(204);
    expect((await call("DELETE", `${base}/items/${id}`)).status).toBe(404);
  });

  test("items list in position order with a keyset cursor; bad cursors are 400", async () => {
    const { siteId, base } = await teamSite();
    const [c] = await h.db.select().from(collections).where(eq(collections.siteId, siteId));
    await h.db.insert(collectionItems).values(
      Array.from({ length: 120 }, (_, i) => ({
        collectionId: c!.id,
        position: i,
        values: { name: `P${i}` },
      })),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: Json } = await call(
        "GET",
        `${base}/items?limit=50${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((i: Json) => i.values.name));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `P${i}`));
    for (const q of ["cursor=garbage", "limit=0", "limit=101"])
      expect((await call("GET", `${base}/items?${q}`)).status).toBe(400);
  });

  test("racing item writes never leave two items at one position", async () => {
    const { siteId, base } = await teamSite();
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => call("POST", `${base}/items`, { values: { name: `R${i}` } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(16).fill(201));
    const rows = await storedItems(siteId);
    expect(rows.map((r) => r.position)).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  test("a deep page is one index range scan: no sort, no skipped rows (10,000 items)", async () => {
    const { siteId } = await teamSite();
    const [c] = await h.db.select().from(collections).where(eq(collections.siteId, siteId));
    await h.db.execute(sql`
      insert into collection_items (collection_id, position, values)
      select ${c!.id}::uuid, i, jsonb_build_object('name', 'P' || i) from generate_series(0, 9999) i`);
    await h.db.execute(sql`analyze collection_items`);
    const plan = JSON.stringify(
      await h.db.execute(sql`
        explain (format json) select id, position, values from collection_items
        where collection_id = ${c!.id}::uuid and position > 9949 order by position limit 51`),
    );
    expect(plan).toContain("collection_items_collection_position_unique");
    expect(plan).not.toContain('"Sort"');
    expect(plan).not.toContain("Seq Scan");
  });

  test("item order: one write giving positions 0..n-1; anything but an exact permutation is refused", async () => {
    const { siteId, base } = await teamSite();
    for (const name of ["A", "B", "C"]) await call("POST", `${base}/items`, { values: { name } });
    const ids = (await storedItems(siteId)).map((r) => r.id);
    const res = await call("PUT", `${base}/items/order`, { itemIds: [...ids].reverse() });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: Json) => [i.values.name, i.position])).toEqual([
      ["C", 0],
      ["B", 1],
      ["A", 2],
    ]);
    for (const [itemIds, named] of [
      [ids.slice(1), ids[0]],
      [[...ids, ids[0]], ids[0]],
      [[...ids, "00000000-0000-4000-8000-000000000000"], "00000000-0000-4000-8000-000000000000"],
    ] as [string[], string][]) {
      const bad = await call("PUT", `${base}/items/order`, { itemIds });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.flatMap((d: Json) => d.ids)).toContain(named);
    }
    expect((await storedItems(siteId)).map((r) => r.id)).toEqual([...ids].reverse());
  });

  test("definition changes existing items would break are refused with how many", async () => {
    const { siteId, base } = await teamSite();
    await call("POST", `${base}/items`, { values: { name: "A", role: "x", rank: 1 } });
    await call("POST", `${base}/items`, { values: { name: "B", role: "y" } });
    await call("POST", `${base}/items`, { values: { name: "C" } });
    const without = (key: string) => TEAM.fields.filter((f) => f.key !== key);
    const cases: [unknown, string, number][] = [
      [{ ...TEAM, fields: without("role") }, "fields.role", 2],
      [{ ...TEAM, fields: [...without("rank"), { key: "rank", type: "text" }] }, "fields.rank", 1],
      [
        { ...TEAM, fields: [...without("role"), { key: "role", type: "text", required: true }] },
        "fields.role",
        1,
      ],
      [
        { ...TEAM, fields: [...TEAM.fields, { key: "email", type: "text", required: true }] },
        "fields.email",
        3,
      ],
    ];
    for (const [def, field, items] of cases) {
      const res = await call("PUT", base, def);
      expect([res.status, field]).toEqual([400, field]);
      expect(res.body.error.details[0]).toMatchObject({ field, items });
      expect(res.body.error.message).toContain(`${items} item(s)`);
    }
    const [c] = await h.db.select().from(collections).where(eq(collections.siteId, siteId));
    expect((c!.fields as Json[]).map((f) => f.key)).toEqual(TEAM.fields.map((f) => f.key));
    // Harmless changes pass: an optional field added, a field nobody uses removed, the name changed.
    const ok = await call("PUT", base, {
      name: "People",
      fields: [...without("bio"), { key: "email", type: "text" }],
    });
    expect(ok.status).toBe(200);
    expect(ok.body.collection).toMatchObject({ name: "People", itemCount: 3 });
  });

  test("bad definitions and keys are refused naming the field", async () => {
    const siteId = await newSite();
    const base = `/api/v1/sites/${siteId}/collections`;
    const cases: [string, unknown, string][] = [
      ["team", { name: "T", fields: [{ key: "Name", type: "text" }] }, "fields.0.key"],
      ["team", { name: "T", fields: [{ key: "name", type: "colour" }] }, "fields.0.type"],
      [
        "team",
        {
          name: "T",
          fields: [
            { key: "a", type: "text" },
            { key: "a", type: "number" },
          ],
        },
        "fields.1.key",
      ],
      ["team", { name: "", fields: [] }, "name"],
      ["Team_1", { name: "T", fields: [] }, "key"],
    ];
    for (const [key, def, field] of cases) {
      const res = await call("PUT", `${base}/${key}`, def);
      expect([res.status, res.body.error.details.map((d: Json) => d.field)]).toEqual([400, [field]]);
    }
    expect((await call("GET", base)).body.collections).toEqual([]);
  });

  test("deleting a collection deletes its items; unknown collections and other organizations are 404", async () => {
    const { siteId, base } = await teamSite();
    await call("POST", `${base}/items`, { values: { name: "A" } });
    const stranger = await h.seedOrg();
    expect((await call("GET", `${base}/items`, undefined, stranger.key)).status).toBe(404);
    expect((await call("POST", `${base}/items`, { values: { name: "x" } }, stranger.key)).status).toBe(404);
    expect((await call("PUT", base, TEAM, stranger.key)).status).toBe(404);
    expect((await call("GET", `/api/v1/sites/${siteId}/collections/nope/items`)).status).toBe(404);
    expect((await call("DELETE", base)).status).toBe(204);
    expect((await call("GET", `${base}/items`)).status).toBe(404);
    expect(await h.db.select().from(collections).where(eq(collections.siteId, siteId))).toHaveLength(0);
  });

  test("text, richtext and link values naming another organization's file are 400, each named (issue 25)", async () => {
    const { siteId, base } = await teamSite();
    const mine = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const stranger = await h.seedOrg();
    const foreignSite = (await h.newSite(stranger.key, { name: "Other" })).id;
    const theirs = await addLibraryFile(h.ctx, {
      siteId: foreignSite,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const encoded = theirs.url.replace("/api/media/", "&#x2F;api&#x2F;media/");
    const refused = await call("POST", `${base}/items`, {
      values: {
        name: "Eve",
        role: `See ${theirs.url} for my face`,
        bio: `Hello ![me](${theirs.url}) and [again](${encoded}).`,
        profile: `${h.ctx.config.publicBaseUrl}${theirs.url}`,
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("VALIDATION_ERROR");
    const named = refused.body.error.details.map((d: Json) => d.field).sort();
    expect(named).toEqual(["values.bio", "values.bio", "values.profile", "values.role"]);
    for (const d of refused.body.error.details) expect(d.message).toContain("another site's file");
    expect(await storedItems(siteId)).toHaveLength(0);
    // The site's own files, and text without media paths, are as before.
    const ok = await call("POST", `${base}/items`, {
      values: { name: "Ada", role: `Logo: ${mine.url}.`, bio: `![me](${mine.url})`, profile: mine.url },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.item.values.bio).toBe(`![me](${mine.url})`);
    const patch = await call("PATCH", `${base}/items/${ok.body.item.id}`, {
      values: { bio: `![x](${theirs.url})` },
    });
    expect(patch.status).toBe(400);
  });
});
