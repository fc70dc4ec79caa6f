import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pages, siteLayouts, sites } from "@site/db";
import { upsertTemplate } from "@site/domain/sites";
import { eq, sql } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
const uniq = () => Math.random().toString(36).slice(2, 9);

beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

async function createSite(key: string, body: unknown) {
  const res = await h.call("POST", "/api/v1/sites", { key, body });
  return { status: res.status, body: (await res.json()) as any };
}

/** A template host site with `n` pages, a layout and styles, registered in the gallery. */
async function makeTemplate(opts: { pages?: number; status?: "approved" | "withdrawn" } = {}) {
  const host = await createSite(owner.key, { name: "Host", slug: `host-${uniq()}` });
  const hostId = host.body.site.id as string;
  await h.db.delete(pages).where(eq(pages.siteId, hostId));
  for (let i = 0; i < (opts.pages ?? 2); i++) {
    await h.db.insert(pages).values({
      siteId: hostId,
      path: i === 0 ? "/" : `/p${i}`,
      title: `Page ${i}`,
      content: `# Page ${i}\n\n<Media src="/api/media/site-media/${hostId}/hero.webp" alt="hero" />`,
      position: i,
    });
  }
  await h.db
    .update(siteLayouts)
    .set({ layout: { header: { nav: ["Home", "Pricing"] } }, styles: { colors: { primary: "#ff0066" } } })
    .where(eq(siteLayouts.siteId, hostId));
  const slug = `tpl-${uniq()}`;
  await upsertTemplate(h.ctx, { slug, siteId: hostId, name: "Landing", status: opts.status ?? "approved" });
  return { slug, hostId };
}

describe("POST /api/v1/sites", () => {
  test("keeps the auth rules (401 without or with a bad key, 403 without sites:write)", async () => {
    await expectAuthRules(h, {
      method: "POST",
      path: "/api/v1/sites",
      scope: "sites:write",
      body: { name: "A", slug: `a-${uniq()}` },
    });
  });

  test("a new site without template: 201, coming soon, draft, welcome page and default layout", async () => {
    const slug = `acme-${uniq()}`;
    const { status, body } = await createSite(owner.key, { name: "Acme", slug });
    expect(status).toBe(201);
    expect(Object.keys(body.site).sort()).toEqual([
      "id",
      "name",
      "public_content_live",
      "slug",
      "updated_at",
    ]);
    expect(body.site).toMatchObject({ name: "Acme", slug, public_content_live: false });
    expect(body.site.id).toMatch(/^[0-9a-f-]{36}$/);
    // microseconds and a UTC offset
    expect(body.site.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
    const [row] = await h.db.select().from(sites).where(eq(sites.id, body.site.id));
    expect(row!.comingSoon).toBe(true);
    expect(row!.orgId).toBe(owner.org.id);
    const sitePages = await h.db.select().from(pages).where(eq(pages.siteId, body.site.id));
    expect(sitePages.map((p) => p.path)).toEqual(["/"]);
    expect(sitePages[0]!.content).toContain("Welcome to Acme");
    const [layout] = await h.db.select().from(siteLayouts).where(eq(siteLayouts.siteId, body.site.id));
    expect(layout!.layout).toBeTruthy();
    expect((layout!.styles as any).colors.primary).toBeString();
  });

  test("name is required and at most 100 characters (emoji count as one)", async () => {
    expect((await createSite(owner.key, { slug: `s-${uniq()}` })).body.error.code).toBe("VALIDATION_ERROR");
    const empty = await createSite(owner.key, { name: "   ", slug: `s-${uniq()}` });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details[0].field).toBe("name");
    const long = await createSite(owner.key, { name: "x".repeat(101), slug: `s-${uniq()}` });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("VALIDATION_ERROR");
    expect((await createSite(owner.key, { name: "x".repeat(100), slug: `s-${uniq()}` })).status).toBe(201);
    expect((await createSite(owner.key, { name: "🚀".repeat(100), slug: `s-${uniq()}` })).status).toBe(201);
    expect((await createSite(owner.key, { name: 42, slug: `s-${uniq()}` })).body.error.code).toBe(
      "VALIDATION_ERROR",
    );
  });

  test("slug is required; a bad format is INVALID_SLUG and a reserved one RESERVED_SLUG", async () => {
    const missing = await createSite(owner.key, { name: "A" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("VALIDATION_ERROR");
    for (const slug of ["Acme", "acme_1", "-acme", "acme-", "a".repeat(64), "ac me"]) {
      const r = await createSite(owner.key, { name: "A", slug });
      expect([r.status, r.body.error.code]).toEqual([400, "INVALID_SLUG"]);
    }
    for (const slug of ["www", "api", "admin", "blog"]) {
      const r = await createSite(owner.key, { name: "A", slug });
      expect([r.status, r.body.error.code]).toEqual([400, "RESERVED_SLUG"]);
    }
  });

  test("a slug is unique across all organizations: 409 SLUG_TAKEN", async () => {
    const slug = `taken-${uniq()}`;
    expect((await createSite(owner.key, { name: "A", slug })).status).toBe(201);
    const other = await h.seedOrg();
    const again = await createSite(other.key, { name: "B", slug });
    expect([again.status, again.body.error.code]).toEqual([409, "SLUG_TAKEN"]);
    const same = await createSite(owner.key, { name: "C", slug });
    expect(same.status).toBe(409);
  });

  test("two concurrent creates of one slug: exactly one 201, the other 409", async () => {
    const slug = `race-${uniq()}`;
    const a = await h.seedOrg();
    const b = await h.seedOrg();
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => createSite(a.key, { name: "A", slug })),
      ...Array.from({ length: 4 }, () => createSite(b.key, { name: "B", slug })),
    ]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === "SLUG_TAKEN")).toHaveLength(7);
    const rows = await h.db.select().from(sites).where(eq(sites.slug, slug));
    expect(rows).toHaveLength(1);
  });

  test("the organization's site limit answers 403 LIMIT_EXCEEDED, also under concurrency", async () => {
    const small = await h.seedOrg({ siteLimit: 2 });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => createSite(small.key, { name: "A", slug: `lim-${uniq()}` })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    for (const r of results.filter((r) => r.status !== 201))
      expect([r.status, r.body.error.code]).toEqual([403, "LIMIT_EXCEEDED"]);
    const [{ n }] = (await h.db.execute(
      sql`select count(*)::int as n from sites where org_id = ${small.org.id}`,
    )) as any;
    expect(n).toBe(2);
  });

  test("editors and viewers may not manage sites: 403 FORBIDDEN", async () => {
    for (const role of ["editor", "viewer"] as const) {
      const m = await h.seedOrg({ role });
      const r = await createSite(m.key, { name: "A", slug: `r-${uniq()}` });
      expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"]);
    }
    const admin = await h.seedOrg({ role: "admin" });
    expect((await createSite(admin.key, { name: "A", slug: `r-${uniq()}` })).status).toBe(201);
  });

  test("a template clones pages, layout and styles of the live host, media references as they are", async () => {
    const tpl = await makeTemplate({ pages: 3 });
    const { status, body } = await createSite(owner.key, {
      name: "Clone",
      slug: `clone-${uniq()}`,
      template: tpl.slug,
    });
    expect(status).toBe(201);
    expect(body.site.public_content_live).toBe(false);
    const cloned = await h.db
      .select()
      .from(pages)
      .where(eq(pages.siteId, body.site.id))
      .orderBy(pages.position);
    expect(cloned.map((p) => p.path)).toEqual(["/", "/p1", "/p2"]);
    expect(cloned[0]!.content).toContain(`/api/media/site-media/${tpl.hostId}/hero.webp`);
    const [layout] = await h.db.select().from(siteLayouts).where(eq(siteLayouts.siteId, body.site.id));
    expect(layout!.layout).toEqual({ header: { nav: ["Home", "Pricing"] } });
    expect(layout!.styles).toEqual({ colors: { primary: "#ff0066" } });
    const [row] = await h.db.select().from(sites).where(eq(sites.id, body.site.id));
    expect(row!.comingSoon).toBe(true);
    expect(row!.clonedFromSiteId).toBe(tpl.hostId);
  });

  test("edits to the gallery template apply to future clones immediately", async () => {
    const tpl = await makeTemplate({ pages: 1 });
    await h.db.update(pages).set({ title: "Edited title" }).where(eq(pages.siteId, tpl.hostId));
    const { body } = await createSite(owner.key, {
      name: "Later",
      slug: `later-${uniq()}`,
      template: tpl.slug,
    });
    const [page] = await h.db.select().from(pages).where(eq(pages.siteId, body.site.id));
    expect(page!.title).toBe("Edited title");
  });

  test("unknown template: 404 TEMPLATE_NOT_FOUND and no site", async () => {
    const slug = `nt-${uniq()}`;
    const r = await createSite(owner.key, { name: "A", slug, template: "no-such-template" });
    expect([r.status, r.body.error.code]).toEqual([404, "TEMPLATE_NOT_FOUND"]);
    expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(0);
  });

  test("a withdrawn template answers 410 TEMPLATE_UNAVAILABLE and creates no site", async () => {
    const tpl = await makeTemplate({ status: "withdrawn" });
    const slug = `wd-${uniq()}`;
    const r = await createSite(owner.key, { name: "A", slug, template: tpl.slug });
    expect([r.status, r.body.error.code]).toEqual([410, "TEMPLATE_UNAVAILABLE"]);
    expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(0);
  });

  test("a host with no pages answers 422 TEMPLATE_SNAPSHOT_EMPTY and creates no site", async () => {
    const tpl = await makeTemplate({ pages: 0 });
    const slug = `em-${uniq()}`;
    const r = await createSite(owner.key, { name: "A", slug, template: tpl.slug });
    expect([r.status, r.body.error.code]).toEqual([422, "TEMPLATE_SNAPSHOT_EMPTY"]);
    expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(0);
  });

  test("template resolution runs before the slug and limit checks write anything", async () => {
    const full = await h.seedOrg({ siteLimit: 0 });
    const r = await createSite(full.key, { name: "A", slug: `x-${uniq()}`, template: "no-such-template" });
    expect(r.body.error.code).toBe("TEMPLATE_NOT_FOUND");
  });

  test("a clone that fails midway rolls the new site back: 500 TEMPLATE_CLONE_FAILED", async () => {
    const tpl = await makeTemplate({ pages: 2 });
    // Make the copy of layouts fail for clones of this host only, inside the clone transaction.
    await h.db.execute(
      sql.raw(`
      create or replace function fail_clone() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from sites where id = new.site_id and cloned_from_site_id = '${tpl.hostId}') then
          raise exception 'disk full while copying';
        end if;
        return new;
      end $$;
      create trigger fail_clone before insert on site_layouts for each row execute function fail_clone();`),
    );
    try {
      const slug = `fail-${uniq()}`;
      const r = await createSite(owner.key, { name: "A", slug, template: tpl.slug });
      expect([r.status, r.body.error.code]).toEqual([500, "TEMPLATE_CLONE_FAILED"]);
      expect(JSON.stringify(r.body)).not.toContain("disk full");
      expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(0);
      const [{ n }] = (await h.db.execute(
        sql`select count(*)::int as n from pages p join sites s on s.id = p.site_id where s.cloned_from_site_id = ${tpl.hostId}`,
      )) as any;
      expect(n).toBe(0);
    } finally {
      await h.db.execute(sql.raw("drop trigger fail_clone on site_layouts; drop function fail_clone();"));
    }
  });
});

describe("GET /api/v1/sites", () => {
  test("lists only the caller's organization, newest first, with a cursor", async () => {
    const org = await h.seedOrg();
    const other = await h.seedOrg();
    await createSite(other.key, { name: "Other", slug: `o-${uniq()}` });
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await createSite(org.key, { name: `S${i}`, slug: `l-${uniq()}` })).body.site.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await h.call("GET", `/api/v1/sites?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
        key: org.key,
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.sites.length).toBeLessThanOrEqual(2);
      seen.push(...body.sites.map((s: any) => s.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });

  test("a bad cursor or limit is a 400 VALIDATION_ERROR", async () => {
    for (const q of ["cursor=garbage", "limit=0", "limit=101", "limit=abc"]) {
      const res = await h.call("GET", `/api/v1/sites?${q}`, { key: owner.key });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.code).toBe("VALIDATION_ERROR");
    }
  });
});

describe("publish and unpublish", () => {
  test("toggle public_content_live; another organization's site is 404", async () => {
    const { body } = await createSite(owner.key, { name: "P", slug: `p-${uniq()}` });
    const pub = await h.call("POST", `/api/v1/sites/${body.site.id}/publish`, { key: owner.key });
    expect(pub.status).toBe(200);
    expect(((await pub.json()) as any).site.public_content_live).toBe(true);
    const unpub = await h.call("POST", `/api/v1/sites/${body.site.id}/unpublish`, { key: owner.key });
    expect(((await unpub.json()) as any).site.public_content_live).toBe(false);
    const stranger = await h.seedOrg();
    const denied = await h.call("POST", `/api/v1/sites/${body.site.id}/publish`, { key: stranger.key });
    expect(denied.status).toBe(404);
    expect(((await denied.json()) as any).error.code).toBe("NOT_FOUND");
    const bogus = await h.call("POST", "/api/v1/sites/not-a-uuid/publish", { key: owner.key });
    expect(bogus.status).toBe(404);
  });
});
