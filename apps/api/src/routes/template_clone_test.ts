import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { collections, pages, sites } from "@site/db";
import { addLibraryFile } from "@site/domain/media";
import { upsertTemplate } from "@site/domain/sites";
import { sampleImage } from "@site/domain/testing";
import { eq, sql } from "drizzle-orm";
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

const call = async (method: string, path: string, body?: unknown) => {
  const res = await h.call(method, path, { key: owner.key, body });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Json) };
};

/** A gallery template whose host has linked pages, a layout with a logo, German strings and a team. */
async function richTemplate() {
  const host = await call("POST", "/api/v1/sites", { name: "Host", slug: `host-${uniq()}` });
  const hostId = host.body.site.id as string;
  const logo = await addLibraryFile(h.ctx, { siteId: hostId, bytes: sampleImage("png"), source: "upload" });
  const photo = await addLibraryFile(h.ctx, { siteId: hostId, bytes: sampleImage("jpeg"), source: "upload" });
  const team = (
    await call("POST", `/api/v1/sites/${hostId}/pages`, { path: "/team", title: "Team", content: "# Team" })
  ).body.page;
  await call("POST", `/api/v1/sites/${hostId}/pages`, {
    path: "/about",
    title: "About",
    content: "See [our team](/team#all).",
  });
  await call("PUT", `/api/v1/sites/${hostId}/layout`, {
    layout: {
      logo: logo.url,
      header: { navigation: [{ label: "Team", href: "/team" }] },
      footer: { text: "Host footer", links: [{ label: "About", href: "/about" }] },
    },
    styles: { colors: { primary: "#ff0066" }, fonts: { heading: "Lora", body: "Inter" } },
  });
  await call("PUT", `/api/v1/sites/${hostId}/chrome/de`, { strings: { "nav.home": "Startseite" } });
  await call("PATCH", `/api/v1/sites/${hostId}/chrome`, { defaultLocale: "de" });
  await call("PUT", `/api/v1/sites/${hostId}/collections/team`, {
    name: "Team",
    fields: [
      { key: "name", type: "text", required: true },
      { key: "photo", type: "image" },
      { key: "profile", type: "link" },
    ],
  });
  for (const name of ["Ada", "Grace"])
    await call("POST", `/api/v1/sites/${hostId}/collections/team/items`, {
      values: { name, photo: photo.url, profile: "/team" },
    });
  const slug = `tpl-${uniq()}`;
  await upsertTemplate(h.ctx, { slug, siteId: hostId, name: "Rich" });
  return { slug, hostId, team, logo, photo };
}

describe("a template clone copies every area", () => {
  test("layout, styles, chrome strings and collections with items are copied; references point at the clone's pages", async () => {
    const tpl = await richTemplate();
    const created = await call("POST", "/api/v1/sites", {
      name: "Clone",
      slug: `cl-${uniq()}`,
      template: tpl.slug,
    });
    expect(created.status).toBe(201);
    const cloneId = created.body.site.id as string;
    const clonePages = await h.db.select().from(pages).where(eq(pages.siteId, cloneId));
    const cloneTeam = clonePages.find((p) => p.path === "/team")!;
    const cloneAbout = clonePages.find((p) => p.path === "/about")!;
    expect(cloneTeam.id).not.toBe(tpl.team.id);
    expect(cloneAbout.content).toBe(`See [our team](page:${cloneTeam.id}#all).`);

    const layout = await call("GET", `/api/v1/sites/${cloneId}/layout`);
    expect(layout.body.layout.header.navigation).toEqual([{ label: "Team", href: "/team" }]);
    expect(layout.body.layout.footer).toEqual({
      text: "Host footer",
      links: [{ label: "About", href: "/about" }],
    });
    expect(layout.body.layout.logo).toStartWith(`${tpl.logo.url}?k=m.`);
    expect(layout.body.styles).toEqual({
      colors: { primary: "#ff0066" },
      fonts: { heading: "Lora", body: "Inter" },
    });
    expect((await h.call("GET", layout.body.layout.logo)).status).toBe(200);

    const chrome = await call("GET", `/api/v1/sites/${cloneId}/chrome`);
    expect(chrome.body).toMatchObject({ locale: "de", defaultLocale: "de", locales: ["de"] });
    expect(chrome.body.strings["nav.home"]).toBe("Startseite");

    const items = (await call("GET", `/api/v1/sites/${cloneId}/collections/team/items`)).body.items;
    expect(items.map((i: Json) => i.values.name)).toEqual(["Ada", "Grace"]);
    expect(items[0].values.photo).toStartWith(`${tpl.photo.url}?k=m.`);
    const [cloneCollection] = await h.db.select().from(collections).where(eq(collections.siteId, cloneId));
    const stored = (await h.db.execute(
      sql`select values from collection_items where collection_id = ${cloneCollection!.id} order by position`,
    )) as unknown as { values: Json }[];
    expect(stored.map((r) => r.values.profile)).toEqual([`page:${cloneTeam.id}`, `page:${cloneTeam.id}`]);

    // The clone's pages are its own: renaming one there changes nothing in the host, and back.
    await call("PATCH", `/api/v1/sites/${cloneId}/pages/${cloneTeam.id}`, { path: "/crew" });
    expect((await call("GET", `/api/v1/sites/${cloneId}/layout`)).body.layout.header.navigation[0].href).toBe(
      "/crew",
    );
    expect(
      (await call("GET", `/api/v1/sites/${tpl.hostId}/layout`)).body.layout.header.navigation[0].href,
    ).toBe("/team");
    expect((await call("GET", `/api/v1/sites/${cloneId}/pages/${cloneAbout.id}`)).body.page.content).toBe(
      "See [our team](/crew#all).",
    );
    expect(
      (await call("GET", `/api/v1/sites/${cloneId}/collections/team/items`)).body.items[0].values.profile,
    ).toBe("/crew");
    expect((await call("GET", `/api/v1/sites/${cloneId}/links/broken`)).body.links).toEqual([]);
  });

  test("a failure while copying collections rolls everything back: 500 TEMPLATE_CLONE_FAILED", async () => {
    const tpl = await richTemplate();
    await h.db.execute(
      sql.raw(`
      create or replace function fail_items_clone() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from collections c join sites s on s.id = c.site_id
                   where c.id = new.collection_id and s.cloned_from_site_id = '${tpl.hostId}') then
          raise exception 'disk full while copying items';
        end if;
        return new;
      end $$;
      create trigger fail_items_clone before insert on collection_items for each row execute function fail_items_clone();`),
    );
    try {
      const slug = `fail-${uniq()}`;
      const res = await call("POST", "/api/v1/sites", { name: "Broken", slug, template: tpl.slug });
      expect([res.status, res.body.error.code]).toEqual([500, "TEMPLATE_CLONE_FAILED"]);
      expect(JSON.stringify(res.body)).not.toContain("disk full");
      expect(await h.db.select().from(sites).where(eq(sites.slug, slug))).toHaveLength(0);
      const [{ n }] = (await h.db.execute(sql`
        select (select count(*) from pages p join sites s on s.id = p.site_id where s.cloned_from_site_id = ${tpl.hostId})
             + (select count(*) from collections c join sites s on s.id = c.site_id where s.cloned_from_site_id = ${tpl.hostId})
             + (select count(*) from site_chrome_strings c join sites s on s.id = c.site_id where s.cloned_from_site_id = ${tpl.hostId})
             + (select count(*) from site_layouts l join sites s on s.id = l.site_id where s.cloned_from_site_id = ${tpl.hostId})
             as n`)) as unknown as { n: string }[];
      expect(Number(n)).toBe(0);
    } finally {
      await h.db.execute(
        sql.raw("drop trigger fail_items_clone on collection_items; drop function fail_items_clone();"),
      );
    }
  });
});
