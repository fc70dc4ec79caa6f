import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addLibraryFile } from "@site/domain/media";
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

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await h.call(method, path, { key: owner.key, body, headers });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};
const visit = async (path: string, headers: Record<string, string> = {}) => {
  const res = await h.call("GET", path, { headers });
  return { status: res.status, body: (await res.json()) as Json };
};
/** Reads a delivery URL (absolute under PUBLIC_BASE_URL) through the app, without a key. */
const deliver = (url: string) => {
  const u = new URL(url);
  return h.call("GET", `${u.pathname}${u.search}`);
};

/** A site with a logo, a navigation, German chrome strings and a team collection with a photo. */
async function builtSite() {
  const slug = `pub-${uniq()}`;
  const created = await call("POST", "/api/v1/sites", { name: "Public Bakery", slug });
  const siteId = created.body.site.id as string;
  const logo = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
  const photo = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("jpeg"), source: "upload" });
  await call("POST", `/api/v1/sites/${siteId}/pages`, { path: "/about", title: "About", content: "# About" });
  await call("PUT", `/api/v1/sites/${siteId}/layout`, {
    layout: {
      logo: logo.url,
      header: {
        navigation: [
          { label: "Home", href: "/" },
          { label: "About", href: "/about" },
        ],
      },
      footer: { text: "Fresh every day", links: [{ label: "About us", href: "/about#story" }] },
    },
  });
  await call("PUT", `/api/v1/sites/${siteId}/chrome/de`, {
    strings: { "nav.home": "Startseite", "cookieNotice.accept": "Akzeptieren" },
  });
  await call("PUT", `/api/v1/sites/${siteId}/collections/team`, {
    name: "Team",
    fields: [
      { key: "name", type: "text", required: true },
      { key: "photo", type: "image" },
    ],
  });
  await call("POST", `/api/v1/sites/${siteId}/collections/team/items`, {
    values: { name: "Ada", photo: photo.url },
  });
  return { siteId, slug, logo, photo };
}

describe("GET /api/v1/public/sites/<slug>", () => {
  test("an unpublished site answers 404 and mints no URL; a published one answers layout, styles and chrome", async () => {
    const s = await builtSite();
    const hidden = await visit(`/api/v1/public/sites/${s.slug}`);
    expect([hidden.status, hidden.body.error.code]).toEqual([404, "NOT_FOUND"]);
    expect(JSON.stringify(hidden.body)).not.toContain("/api/media/");
    expect((await visit(`/api/v1/public/sites/${s.slug}/collections/team/items`)).status).toBe(404);

    await call("POST", `/api/v1/sites/${s.siteId}/publish`);
    const { status, body } = await visit(`/api/v1/public/sites/${s.slug}`);
    expect(status).toBe(200);
    expect(body.site).toEqual({ name: "Public Bakery", slug: s.slug });
    expect(body.layout.logo).toStartWith(`${h.ctx.config.publicBaseUrl}${s.logo.url}?k=v.`);
    expect(body.layout.header.navigation).toEqual([
      { label: "Home", href: "/" },
      { label: "About", href: "/about" },
    ]);
    expect(body.layout.footer.links).toEqual([{ label: "About us", href: "/about#story" }]);
    expect(body.styles.fonts.body).toBe("Inter");
    expect(body.chrome.locale).toBe("en");
    expect(body.chrome.strings["nav.home"]).toBe("Home");
    expect((await deliver(body.layout.logo)).status).toBe(200);

    // Unpublishing revokes at once: the read is gone and the visitor grant no longer opens the logo.
    await call("POST", `/api/v1/sites/${s.siteId}/unpublish`);
    expect((await visit(`/api/v1/public/sites/${s.slug}`)).status).toBe(404);
    expect((await deliver(body.layout.logo)).status).toBe(403);
  });

  test("the chrome locale comes from ?locale, else Accept-Language, else the default", async () => {
    const s = await builtSite();
    await call("POST", `/api/v1/sites/${s.siteId}/publish`);
    const base = `/api/v1/public/sites/${s.slug}`;
    const swiss = await visit(`${base}?locale=de-CH`);
    expect(swiss.body.chrome.locale).toBe("de");
    expect(swiss.body.chrome.strings["nav.home"]).toBe("Startseite");
    expect(swiss.body.chrome.strings["notFound.title"]).toBe("Page not found");
    const negotiated = await visit(base, { "accept-language": "fr-FR;q=0.9, de-AT;q=0.8, en;q=0.1" });
    expect(negotiated.body.chrome).toMatchObject({
      locale: "de",
      strings: { "cookieNotice.accept": "Akzeptieren" },
    });
    const french = await visit(base, { "accept-language": "fr" });
    expect(french.body.chrome.locale).toBe("en");
    const query = await visit(`${base}?locale=en`, { "accept-language": "de" });
    expect(query.body.chrome.locale).toBe("en");
    const bad = await visit(`${base}?locale=not_a_locale`);
    expect([bad.status, bad.body.error.details[0].field]).toEqual([400, "locale"]);
  });

  test("collection items are listed for visitors with images signed by visitor grants", async () => {
    const s = await builtSite();
    await call("POST", `/api/v1/sites/${s.siteId}/publish`);
    const { status, body } = await visit(`/api/v1/public/sites/${s.slug}/collections/team/items?limit=10`);
    expect(status).toBe(200);
    expect(body.items).toHaveLength(1);
    expect(body.items[0].values.name).toBe("Ada");
    expect(body.items[0].values.photo).toStartWith(`${h.ctx.config.publicBaseUrl}${s.photo.url}?k=v.`);
    expect((await deliver(body.items[0].values.photo)).status).toBe(200);
    expect((await visit(`/api/v1/public/sites/${s.slug}/collections/nope/items`)).status).toBe(404);
    expect((await visit("/api/v1/public/sites/no-such-site-here")).status).toBe(404);
  });
});
