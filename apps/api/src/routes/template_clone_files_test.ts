import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cloneSourceFiles, collectionItems, collections, pages, siteLayouts } from "@site/db";
import { addLibraryFile, type LibraryEntry, shareMedia } from "@site/domain/media";
import { signCampaignForMail, storableCampaignHtml } from "@site/domain/newsletters";
import { upsertTemplate } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { and, eq, sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Issue 25 item 2: a clone keeps only the host files its copied content carried (decision 0610).

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

let h: TestApp;
let host: Awaited<ReturnType<TestApp["seedOrg"]>>;
let cloner: Awaited<ReturnType<TestApp["seedOrg"]>>;
beforeAll(async () => {
  h = await buildTestApp();
  host = await h.seedOrg({ siteLimit: 50 });
  cloner = await h.seedOrg({ siteLimit: 50 });
});
afterAll(() => h.close());

type Who = typeof host;
const call = async (who: Who, method: string, path: string, body?: unknown) => {
  const res = await h.call(method, path, { key: who.key, body });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};
const addFile = (siteId: string) =>
  addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
const media = (src: string) =>
  `<Column fillWidth><Column fillWidth><Media src="${src}" alt="" /></Column></Column>`;
/** Reads a delivery URL (absolute under PUBLIC_BASE_URL, or a path) through the app. */
const deliver = (url: string) => {
  const u = new URL(url, h.ctx.config.publicBaseUrl);
  return h.call("GET", `${u.pathname}${u.search}`);
};

/**
 * A gallery template whose content carries three host files (one in a page, the logo, one in a
 * collection item) while the host's library also holds a file its content never named.
 */
async function template() {
  const made = await call(host, "POST", "/api/v1/sites", { name: "Host", slug: `host-${uniq()}` });
  const hostId = made.body.site.id as string;
  const inPage = await addFile(hostId);
  const logo = await addFile(hostId);
  const photo = await addFile(hostId);
  const secret = await addFile(hostId);
  expect(
    (
      await call(host, "POST", `/api/v1/sites/${hostId}/pages`, {
        path: "/hero",
        title: "H",
        content: media(inPage.url),
      })
    ).status,
  ).toBe(201);
  const layout = await call(host, "PUT", `/api/v1/sites/${hostId}/layout`, {
    layout: { logo: logo.url, header: { navigation: [] }, footer: { text: "", links: [] } },
  });
  expect(layout.status).toBe(200);
  await call(host, "PUT", `/api/v1/sites/${hostId}/collections/team`, {
    name: "Team",
    fields: [
      { key: "name", type: "text", required: true },
      { key: "photo", type: "image" },
    ],
  });
  expect(
    (
      await call(host, "POST", `/api/v1/sites/${hostId}/collections/team/items`, {
        values: { name: "Ada", photo: photo.url },
      })
    ).status,
  ).toBe(201);
  const slug = `tpl-${uniq()}`;
  await upsertTemplate(h.ctx, { slug, siteId: hostId, name: "T", status: "approved" });
  return { slug, hostId, inPage, logo, photo, secret };
}

async function clone(slug: string) {
  const made = await call(cloner, "POST", "/api/v1/sites", {
    name: "Clone",
    slug: `cl-${uniq()}`,
    template: slug,
  });
  expect(made.status).toBe(201);
  return made.body.site as { id: string; slug: string };
}

const publish = async (siteId: string) =>
  expect((await call(cloner, "POST", `/api/v1/sites/${siteId}/publish`)).status).toBe(200);

describe("a clone keeps only the host files its copied content carried", () => {
  test("the clone records the carried files at clone time, as data", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    const rows = await h.db.select().from(cloneSourceFiles).where(eq(cloneSourceFiles.siteId, site.id));
    expect(rows.map((r) => r.key).sort()).toEqual([tpl.inPage.key, tpl.logo.key, tpl.photo.key].sort());
  });

  test("page writes: carried files 201; the host's other files, later files and files after withdrawal 400", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    const write = (src: string) =>
      call(cloner, "POST", `/api/v1/sites/${site.id}/pages`, {
        path: `/p-${uniq()}`,
        title: "P",
        content: media(src),
      });
    expect((await write(tpl.inPage.url)).status).toBe(201);
    expect((await write(tpl.logo.url)).status).toBe(201);
    const never = await write(tpl.secret.url);
    expect(never.status).toBe(400);
    expect(never.body.error.code).toBe("VALIDATION_ERROR");
    expect(never.body.error.details[0].ref).toBe(tpl.secret.url);
    const later = await addFile(tpl.hostId);
    expect((await write(later.url)).status).toBe(400);
    // A Markdown image, as in the finding's repro.
    const md = await call(cloner, "POST", `/api/v1/sites/${site.id}/pages`, {
      path: `/md-${uniq()}`,
      title: "M",
      content: `![x](${tpl.secret.url})`,
    });
    expect(md.status).toBe(400);
    await upsertTemplate(h.ctx, { slug: tpl.slug, siteId: tpl.hostId, name: "T", status: "withdrawn" });
    const afterWithdrawal = await addFile(tpl.hostId);
    expect((await write(afterWithdrawal.url)).status).toBe(400);
    // What the clone carried stays usable after the template is withdrawn.
    expect((await write(tpl.inPage.url)).status).toBe(201);
  });

  test("public read signs carried files only, whatever the stored page says", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    // A row written past the write check (SQL, an old version) names a file the clone never carried.
    await h.db.insert(pages).values({
      siteId: site.id,
      path: "/smuggled",
      title: "S",
      content: `${media(tpl.inPage.url)}\n\n![x](${tpl.secret.url})`,
      position: 50,
    });
    await publish(site.id);
    const res = await h.call("GET", `/api/v1/public/sites/${site.slug}/pages`);
    expect(res.status).toBe(200);
    const page = ((await res.json()) as Json).pages.find((p: Json) => p.path === "/smuggled");
    const carried = /src="([^"]+)"/.exec(page.content)![1]!;
    expect(carried).toContain("?k=v.");
    expect((await deliver(carried)).status).toBe(200);
    expect(page.content).toContain(`](${tpl.secret.url})`);
    expect(page.content).not.toContain(`${tpl.secret.url}?k=`);
    expect((await deliver(tpl.secret.url)).status).toBe(403);
    // Members are held to the same set.
    const member = await call(cloner, "GET", `/api/v1/sites/${site.id}/pages`);
    const mine = member.body.pages.find((p: Json) => p.path === "/smuggled");
    expect(mine.displayContent).not.toContain(`${tpl.secret.url}?k=`);
    expect(mine.unsignedMedia.map((u: Json) => u.ref)).toEqual([tpl.secret.url]);
  });

  test("collection images: an uncarried host file is refused on write and never signed on read", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    const refused = await call(cloner, "POST", `/api/v1/sites/${site.id}/collections/team/items`, {
      values: { name: "Eve", photo: tpl.secret.url },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0]).toMatchObject({ field: "values.photo", ref: tpl.secret.url });
    expect(
      (
        await call(cloner, "POST", `/api/v1/sites/${site.id}/collections/team/items`, {
          values: { name: "Bo", photo: tpl.photo.url },
        })
      ).status,
    ).toBe(201);
    const [team] = await h.db
      .select({ id: collections.id })
      .from(collections)
      .where(and(eq(collections.siteId, site.id), eq(collections.key, "team")));
    await h.db
      .insert(collectionItems)
      .values({ collectionId: team!.id, position: 99, values: { name: "Mal", photo: tpl.secret.url } });
    await publish(site.id);
    const res = await h.call("GET", `/api/v1/public/sites/${site.slug}/collections/team/items`);
    expect(res.status).toBe(200);
    const items = ((await res.json()) as Json).items as Json[];
    const byName = new Map(items.map((i) => [i.values.name, i.values.photo as string]));
    expect(byName.get("Mal")).toBe(tpl.secret.url);
    expect(byName.get("Ada")).toContain("?k=v.");
    expect((await deliver(byName.get("Ada")!)).status).toBe(200);
    expect(byName.get("Bo")).toContain("?k=v.");
    const members = await call(cloner, "GET", `/api/v1/sites/${site.id}/collections/team/items`);
    const mal = members.body.items.find((i: Json) => i.values.name === "Mal");
    expect(mal.values.photo).toBe(tpl.secret.url);
  });

  test("layout logo: an uncarried host file is refused on write and never signed on read", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    await publish(site.id);
    const carried = ((await (await h.call("GET", `/api/v1/public/sites/${site.slug}`)).json()) as Json).layout
      .logo;
    expect(carried).toContain(`${tpl.logo.url}?k=v.`);
    expect((await deliver(carried)).status).toBe(200);
    const refused = await call(cloner, "PUT", `/api/v1/sites/${site.id}/layout`, {
      layout: { logo: tpl.secret.url, header: { navigation: [] }, footer: { text: "", links: [] } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0]).toMatchObject({ field: "layout.logo", ref: tpl.secret.url });
    await h.db
      .update(siteLayouts)
      .set({ layout: sql`jsonb_set(${siteLayouts.layout}, '{logo}', to_jsonb(${tpl.secret.url}::text))` })
      .where(eq(siteLayouts.siteId, site.id));
    const logo = ((await (await h.call("GET", `/api/v1/public/sites/${site.slug}`)).json()) as Json).layout
      .logo;
    expect(logo).toBe(tpl.secret.url);
    const member = await call(cloner, "GET", `/api/v1/sites/${site.id}/layout`);
    expect(member.body.layout.logo).toBe(tpl.secret.url);
  });

  test("campaign mail and share tokens: no token for an uncarried host file", async () => {
    const tpl = await template();
    const site = await clone(tpl.slug);
    const html = (f: LibraryEntry) => `<p><img src="${f.url}" alt=""></p>`;
    await expect(storableCampaignHtml(h.ctx, site.id, html(tpl.secret))).rejects.toMatchObject({
      code: "VALIDATION_ERROR",
    });
    expect(await storableCampaignHtml(h.ctx, site.id, html(tpl.inPage))).toContain(tpl.inPage.url);
    const mailed = await signCampaignForMail(h.ctx, site.id, `${html(tpl.inPage)}${html(tpl.secret)}`);
    expect(mailed).toContain(`${tpl.inPage.url}?t=`);
    expect(mailed).toContain(`src="${tpl.secret.url}"`);
    expect(mailed).not.toContain(`${tpl.secret.url}?t=`);
    await expect(shareMedia(h.ctx, { siteId: site.id, key: tpl.secret.key })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await shareMedia(h.ctx, { siteId: site.id, key: tpl.inPage.key })).url).toContain("?t=");
  });
});
