import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
import { upsertTemplate } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

let h: TestApp;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
beforeAll(async () => {
  h = await buildTestApp();
  owner = await h.seedOrg({ siteLimit: 100 });
});
afterAll(() => h.close());

const newSite = async (template?: string) => {
  const slug = `v-${uniq()}`;
  const res = await h.call("POST", "/api/v1/sites", {
    key: owner.key,
    body: { name: "Visible", slug, ...(template ? { template } : {}) },
  });
  return { id: ((await res.json()) as Json).site.id as string, slug };
};
const setLive = (siteId: string, live: boolean) =>
  h.call("POST", `/api/v1/sites/${siteId}/${live ? "publish" : "unpublish"}`, { key: owner.key });
const media = (src: string) =>
  `<Column fillWidth><Column fillWidth><Media src="${src}" alt="" /></Column></Column>`;
/** Reads a delivery URL (absolute under PUBLIC_BASE_URL) through the app. */
const deliver = (url: string) => {
  const u = new URL(url);
  return h.call("GET", `${u.pathname}${u.search}`);
};

describe("GET /api/v1/public/sites/<slug>/pages", () => {
  test("404 while unpublished; once published, stored media paths come back with visitor grants", async () => {
    const site = await newSite();
    const file = await addLibraryFile(h.ctx, {
      siteId: site.id,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const created = await h.call("POST", `/api/v1/sites/${site.id}/pages`, {
      key: owner.key,
      body: { path: "/gallery", title: "Gallery", content: `# G\n\n${media(file.url)}` },
    });
    const pageId = ((await created.json()) as Json).page.id;
    expect((await h.call("GET", `/api/v1/public/sites/${site.slug}/pages`)).status).toBe(404);
    expect((await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/${pageId}`)).status).toBe(404);

    await setLive(site.id, true);
    const res = await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/${pageId}`);
    expect(res.status).toBe(200);
    const content = ((await res.json()) as Json).page.content as string;
    const signed = /src="([^"]+)"/.exec(content)![1]!;
    expect(signed).toStartWith(`${h.ctx.config.publicBaseUrl}${file.url}?k=v.`);
    const list = (await (await h.call("GET", `/api/v1/public/sites/${site.slug}/pages`)).json()) as Json;
    expect(list.pages.some((p: Json) => p.content.includes(`${file.url}?k=v.`))).toBe(true);
    const image = await deliver(signed);
    expect(image.status).toBe(200);
    expect(image.headers.get("cache-control")).toStartWith("public");

    // Unpublishing revokes at once: the page is gone and the grant no longer opens the file.
    await setLive(site.id, false);
    expect((await h.call("GET", `/api/v1/public/sites/${site.slug}/pages`)).status).toBe(404);
    expect((await deliver(signed)).status).toBe(403);
  });

  test("a published clone signs paths that still point at the template host's files", async () => {
    const host = await newSite();
    const file = await addLibraryFile(h.ctx, {
      siteId: host.id,
      bytes: sampleImage("gif"),
      source: "upload",
    });
    await h.call("POST", `/api/v1/sites/${host.id}/pages`, {
      key: owner.key,
      body: { path: "/hero", title: "Hero", content: media(file.url) },
    });
    const slug = `tpl-${uniq()}`;
    await upsertTemplate(h.ctx, { slug, siteId: host.id, name: "T", status: "approved" });
    const clone = await newSite(slug);
    await setLive(clone.id, true);
    const out = (await (await h.call("GET", `/api/v1/public/sites/${clone.slug}/pages`)).json()) as Json;
    const hero = out.pages.find((p: Json) => p.path === "/hero");
    const signed = /src="([^"]+)"/.exec(hero.content)![1]!;
    expect((await deliver(signed)).status).toBe(200);
  });

  test("unknown slugs and pages answer 404 NOT_FOUND", async () => {
    const site = await newSite();
    await setLive(site.id, true);
    const missing = await h.call("GET", "/api/v1/public/sites/no-such-site/pages");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).error.code).toBe("NOT_FOUND");
    expect((await h.call("GET", `/api/v1/public/sites/${site.slug}/pages/not-a-uuid`)).status).toBe(404);
  });
});
