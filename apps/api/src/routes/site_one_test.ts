import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { organizations, sites } from "@site/db";
import { createApiKey, createMember, type Role, type Scope } from "@site/domain/core";
import { addLibraryFile, mintShareToken, sweepMedia } from "@site/domain/media";
import { upsertTemplate } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { eq, sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// GET|PATCH|DELETE /api/v1/sites/<id> (issue 29; contract "One site, deleting files…"; decision 0730).

type Json = any;
let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
const uniq = () => Math.random().toString(36).slice(2, 9);

beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 3 });
});
afterAll(() => h.close());

const call = async (method: string, path: string, key = owner.key, body?: unknown) => {
  const res = await h.call(method, path, { key, body });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};

/** A key of the owner's organization made by a new member of `role`, with `scopes`. */
async function keyOf(role: Role, scopes: Scope[]) {
  const user = await createMember(h.ctx, { orgId: owner.org.id, email: `${uniq()}@example.test`, role });
  return (await createApiKey(h.ctx, { orgId: owner.org.id, userId: user.id, scopes })).key;
}

describe("GET /api/v1/sites/<id>", () => {
  test("200 {site} for any key of the organization; another organization's or an unknown id is 404", async () => {
    const site = await h.newSite(owner.key, { name: "One" });
    const reader = await keyOf("viewer", ["content:read"]);
    const r = await call("GET", `/api/v1/sites/${site.id}`, reader);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.site).sort()).toEqual([
      "id",
      "name",
      "public_content_live",
      "slug",
      "updated_at",
    ]);
    expect(r.body.site).toMatchObject({
      id: site.id,
      name: "One",
      slug: site.slug,
      public_content_live: false,
    });

    const stranger = await h.seedOrg();
    expect((await call("GET", `/api/v1/sites/${site.id}`, stranger.key)).status).toBe(404);
    expect((await call("GET", "/api/v1/sites/not-a-uuid")).status).toBe(404);
    expect((await h.call("GET", `/api/v1/sites/${site.id}`)).status).toBe(401);
  });
});

describe("PATCH /api/v1/sites/<id>", () => {
  test("renames (200 {site}); a blank or too long name is 400; sites:write and the manage-sites role are both needed", async () => {
    const site = await h.newSite(owner.key, { name: "Before" });
    const r = await call("PATCH", `/api/v1/sites/${site.id}`, owner.key, { name: "  After  " });
    expect(r.status).toBe(200);
    expect(r.body.site).toMatchObject({ id: site.id, name: "After", slug: site.slug });
    expect((await call("GET", `/api/v1/sites/${site.id}`)).body.site.name).toBe("After");

    const blank = await call("PATCH", `/api/v1/sites/${site.id}`, owner.key, { name: " " });
    expect(blank.status).toBe(400);
    expect(blank.body.error.code).toBe("VALIDATION_ERROR");
    expect(
      (await call("PATCH", `/api/v1/sites/${site.id}`, owner.key, { name: "x".repeat(101) })).status,
    ).toBe(400);

    const editor = await keyOf("editor", ["sites:write", "content:write"]);
    const denied = await call("PATCH", `/api/v1/sites/${site.id}`, editor, { name: "Nope" });
    expect(denied.status).toBe(403);
    const noScope = await keyOf("owner", ["content:write"]);
    expect((await call("PATCH", `/api/v1/sites/${site.id}`, noScope, { name: "Nope" })).status).toBe(403);
    expect((await call("GET", `/api/v1/sites/${site.id}`)).body.site.name).toBe("After");
  });
});

describe("DELETE /api/v1/sites/<id>", () => {
  test("204; then 404 everywhere (site, pages, media, public reads, delivery of its files) and gone from the list", async () => {
    const site = await h.newSite(owner.key);
    const file = await addLibraryFile(h.ctx, {
      siteId: site.id,
      bytes: sampleImage("png"),
      source: "upload",
    });
    expect((await call("POST", `/api/v1/sites/${site.id}/publish`)).status).toBe(200);
    expect((await h.call("GET", `/api/v1/public/sites/${site.slug}/pages`)).status).toBe(200);
    const listed = await call("GET", `/api/v1/sites/${site.id}/media`);
    const displayUrl = listed.body.images[0].displayUrl as string;
    expect((await h.call("GET", displayUrl)).status).toBe(200);
    const shareUrl = `${file.url}?t=${mintShareToken(h.ctx, { siteId: site.id, key: file.key, ttlSeconds: 600 })}`;
    expect((await h.call("GET", shareUrl)).status).toBe(200);

    const del = await call("DELETE", `/api/v1/sites/${site.id}`);
    expect(del.status).toBe(204);

    for (const path of [
      `/api/v1/sites/${site.id}`,
      `/api/v1/sites/${site.id}/pages`,
      `/api/v1/sites/${site.id}/media`,
      `/api/v1/sites/${site.id}/layout`,
      `/api/v1/public/sites/${site.slug}/pages`,
      displayUrl,
      shareUrl,
    ]) {
      const res = await h.call("GET", path, path.startsWith("/api/v1/sites") ? { key: owner.key } : {});
      expect([path, res.status]).toEqual([path, 404]);
      expect(((await res.json()) as Json).error.code).toBe("NOT_FOUND");
    }
    expect((await call("PATCH", `/api/v1/sites/${site.id}`, owner.key, { name: "x" })).status).toBe(404);
    expect((await call("POST", `/api/v1/sites/${site.id}/publish`)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/sites/${site.id}`)).status).toBe(404);
    const list = await call("GET", "/api/v1/sites?limit=100");
    expect(list.body.sites.map((s: Json) => s.id)).not.toContain(site.id);
  });

  test("the slug stays taken for SITE_DELETE_GRACE_S, then a new site may take it; the deleted one no longer counts against the limit", async () => {
    const org = await h.seedOrg({ siteLimit: 1 });
    const slug = `grace-${uniq()}`;
    const first = await h.newSite(org.key, { slug });
    expect((await call("DELETE", `/api/v1/sites/${first.id}`, org.key)).status).toBe(204);

    const again = await call("POST", "/api/v1/sites", org.key, { name: "Again", slug });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("SLUG_TAKEN");
    // The limit of 1 is free again: another slug is accepted at once.
    const other = await call("POST", "/api/v1/sites", org.key, { name: "Other", slug: `other-${uniq()}` });
    expect(other.status).toBe(201);
    expect((await call("DELETE", `/api/v1/sites/${other.body.site.id}`, org.key)).status).toBe(204);

    // Seven days (the default grace) and a second later, the slug is free.
    await h.db
      .update(sites)
      .set({ deletedAt: sql`now() - interval '7 days 1 second'` })
      .where(eq(sites.id, first.id));
    const taken = await call("POST", "/api/v1/sites", org.key, { name: "New", slug });
    expect(taken.status).toBe(201);
    expect(taken.body.site.id).not.toBe(first.id);
    expect(await h.db.select().from(sites).where(eq(sites.id, first.id))).toEqual([]);
  });

  test("the files' bytes go back to the quota at once; the sweeper purges a site past its grace, not before", async () => {
    const org = await h.seedOrg();
    const site = await h.newSite(org.key);
    const file = await addLibraryFile(h.ctx, {
      siteId: site.id,
      bytes: sampleImage("png", { size: 4096 }),
      source: "upload",
    });
    const used = async () =>
      (await h.db.select().from(organizations).where(eq(organizations.id, org.org.id)))[0]!.storageUsedBytes;
    expect(await used()).toBe(file.size);
    expect((await call("DELETE", `/api/v1/sites/${site.id}`, org.key)).status).toBe(204);
    expect(await used()).toBe(0);

    await sweepMedia(h.ctx);
    expect((await h.db.select().from(sites).where(eq(sites.id, site.id))).length).toBe(1);
    await h.db.update(sites).set({ deletedAt: sql`now() - interval '8 days'` }).where(eq(sites.id, site.id));
    const sweep = await sweepMedia(h.ctx, { orphans: true, orphanGraceMs: 0 });
    expect(sweep.sitesPurged).toBeGreaterThanOrEqual(1);
    expect(await h.db.select().from(sites).where(eq(sites.id, site.id))).toEqual([]);
    expect(await h.ctx.store.head(file.key)).toBeNull();
    expect(await used()).toBe(0);
  });

  test("sites:write and the manage-sites role are both needed; a template host answers 409 naming its templates", async () => {
    const site = await h.newSite(owner.key);
    const editor = await keyOf("editor", ["sites:write", "content:write"]);
    expect((await call("DELETE", `/api/v1/sites/${site.id}`, editor)).status).toBe(403);
    const contentOnly = await keyOf("owner", ["content:read", "content:write"]);
    expect((await call("DELETE", `/api/v1/sites/${site.id}`, contentOnly)).status).toBe(403);
    expect((await call("GET", `/api/v1/sites/${site.id}`)).status).toBe(200);

    const slug = `tpl-${uniq()}`;
    await upsertTemplate(h.ctx, { slug, siteId: site.id, name: "T", status: "withdrawn" });
    const refused = await call("DELETE", `/api/v1/sites/${site.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("CONFLICT");
    expect(refused.body.error.details).toEqual({ templates: [slug] });
    expect((await call("GET", `/api/v1/sites/${site.id}`)).status).toBe(200);
  });
});
