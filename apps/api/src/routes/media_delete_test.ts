import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { organizations } from "@site/db";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

// DELETE /api/v1/sites/<id>/media/<mediaId> (issue 29; contract "One site, deleting files…"; decision 0731).

type Json = any;
let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;

beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

const call = async (method: string, path: string, body?: unknown, key = owner.key) => {
  const res = await h.call(method, path, { key, body });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};
const used = async () =>
  (await h.db.select().from(organizations).where(eq(organizations.id, owner.org.id)))[0]!.storageUsedBytes;

/** A site with one uploaded file; the file's id as the list shows it. */
async function siteWithFile() {
  const site = await h.newSite(owner.key);
  const file = await addLibraryFile(h.ctx, {
    siteId: site.id,
    bytes: sampleImage("png", { size: 2048 }),
    source: "upload",
  });
  const list = await call("GET", `/api/v1/sites/${site.id}/media`);
  const listed = list.body.images.find((i: Json) => i.url === file.url);
  expect(listed.id).toMatch(/^[0-9a-f-]{36}$/);
  return { site, file, id: listed.id as string, displayUrl: listed.displayUrl as string };
}

describe("DELETE /api/v1/sites/<id>/media/<mediaId>", () => {
  test("keeps the auth rules (401, 403 without content:write)", async () => {
    const { site, id } = await siteWithFile();
    await expectAuthRules(h, {
      method: "DELETE",
      path: `/api/v1/sites/${site.id}/media/${id}`,
      scope: "content:write",
    });
  });

  test("204: unlisted, delivery 404, bytes back in the quota and gone from storage", async () => {
    const { site, file, id, displayUrl } = await siteWithFile();
    const before = await used();
    expect((await h.call("GET", displayUrl)).status).toBe(200);

    expect((await call("DELETE", `/api/v1/sites/${site.id}/media/${id}`)).status).toBe(204);

    const list = await call("GET", `/api/v1/sites/${site.id}/media`);
    expect(list.body.images.map((i: Json) => i.id)).not.toContain(id);
    const delivered = await h.call("GET", displayUrl);
    expect(delivered.status).toBe(404);
    expect(await used()).toBe(before - file.size);
    expect(await h.ctx.store.head(file.key)).toBeNull();
    // Again, another site's id, or no id at all: 404.
    expect((await call("DELETE", `/api/v1/sites/${site.id}/media/${id}`)).status).toBe(404);
    const other = await siteWithFile();
    expect((await call("DELETE", `/api/v1/sites/${site.id}/media/${other.id}`)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/sites/${site.id}/media/nope`)).status).toBe(404);
    const stranger = await h.seedOrg();
    expect(
      (await call("DELETE", `/api/v1/sites/${other.site.id}/media/${other.id}`, undefined, stranger.key))
        .status,
    ).toBe(404);
    expect((await h.call("GET", other.displayUrl)).status).toBe(200);
  });

  test("409 CONFLICT naming each page, the layout, a collection item and a campaign that use it; 204 once they are gone", async () => {
    const { site, file, id } = await siteWithFile();
    const base = `/api/v1/sites/${site.id}`;
    const page = await call("POST", `${base}/pages`, {
      path: "/gallery",
      title: "Gallery",
      content: `# Gallery\n\n<Media src="${file.url}" alt="a" />`,
    });
    expect(page.status).toBe(201);
    const layout = (await call("GET", `${base}/layout`)).body;
    expect(
      (await call("PUT", `${base}/layout`, { layout: { ...layout.layout, logo: file.url } })).status,
    ).toBe(200);
    expect(
      (
        await call("PUT", `${base}/collections/team`, {
          name: "Team",
          fields: [
            { key: "name", type: "text", required: true },
            { key: "photo", type: "image" },
          ],
        })
      ).status,
    ).toBe(200);
    const item = await call("POST", `${base}/collections/team/items`, {
      values: { name: "Ada", photo: file.url },
    });
    expect(item.status).toBe(201);
    const campaign = await call("POST", `${base}/campaigns`, {
      subject: "News",
      html: `<p><img src="${file.url}"></p>`,
    });
    expect(campaign.status).toBe(201);

    const refused = await call("DELETE", `${base}/media/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("CONFLICT");
    const refs = refused.body.error.details.references as Json[];
    expect(refs).toContainEqual({ kind: "page", id: page.body.page.id, path: "/gallery" });
    expect(refs).toContainEqual({ kind: "layout" });
    expect(refs).toContainEqual({
      kind: "collectionItem",
      id: item.body.item.id,
      collectionId: expect.any(String),
    });
    expect(refs).toContainEqual({
      kind: "campaign",
      id: campaign.body.campaign.id,
      subject: "News",
      status: "draft",
    });
    expect(refused.body.error.details.total).toBe(4);
    // Nothing changed: still listed and stored.
    const list = await call("GET", `${base}/media`);
    expect(list.body.images.map((i: Json) => i.id)).toContain(id);
    expect(await h.ctx.store.head(file.key)).not.toBeNull();

    // Remove each use; the delete then goes through.
    expect((await call("DELETE", `${base}/pages/${page.body.page.id}`)).status).toBe(204);
    const now = (await call("GET", `${base}/layout`)).body;
    expect((await call("PUT", `${base}/layout`, { layout: { ...now.layout, logo: null } })).status).toBe(200);
    expect((await call("DELETE", `${base}/collections/team/items/${item.body.item.id}`)).status).toBe(204);
    expect((await call("DELETE", `${base}/campaigns/${campaign.body.campaign.id}`)).status).toBe(204);
    expect((await call("DELETE", `${base}/media/${id}`)).status).toBe(204);
  });
});
