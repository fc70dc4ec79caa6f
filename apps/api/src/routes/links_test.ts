import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pages } from "@site/db";
import { addLibraryFile } from "@site/domain/media";
import { sampleImage } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;

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
async function newSite() {
  const { id, slug } = await h.newSite(owner.key, { name: "Links" });
  return { siteId: id, slug };
}
const page = async (siteId: string, path: string, content: string) => {
  const res = await call("POST", `/api/v1/sites/${siteId}/pages`, { path, title: path, content });
  expect(res.status).toBe(201);
  return res.body.page as Json;
};
const storedContent = async (id: string) =>
  (await h.db.select().from(pages).where(eq(pages.id, id)))[0]!.content;

const ABOUT = [
  "# About",
  "",
  "Meet [the team](/team#lead) or read [more][t].",
  "",
  '<Button href="/team?tab=all">Team</Button> and <a href="/team/">the team</a>.',
  "",
  "![a picture of the team](/team) stays a resource; [docs](https://example.com/team) stay external; [top](#top).",
  "",
  "[t]: /team",
  "",
].join("\n");

describe("links survive renames", () => {
  test("keep the auth rules", async () => {
    const { siteId } = await newSite();
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/sites/${siteId}/links/translate`,
      scope: "content:read",
      body: { hrefs: ["/"] },
    });
    await expectAuthRules(h, {
      method: "GET",
      path: `/api/v1/sites/${siteId}/links/broken`,
      scope: "content:read",
    });
  });

  test("internal links in MDX are stored as page references, read back as paths, and follow a rename", async () => {
    const { siteId, slug } = await newSite();
    const team = await page(siteId, "/team", "# Team");
    const about = await page(siteId, "/about", ABOUT);
    expect(about.content).toBe(ABOUT);
    const stored = await storedContent(about.id);
    const ref = `page:${team.id}`;
    expect(stored).toContain(`[the team](${ref}#lead)`);
    expect(stored).toContain(`href="${ref}?tab=all"`);
    expect(stored).toContain(`<a href="${ref}/">`);
    expect(stored).toContain(`[t]: ${ref}`);
    expect(stored).toContain("![a picture of the team](/team)");
    expect(stored).toContain("(https://example.com/team)");

    const renamed = await call("PATCH", `/api/v1/sites/${siteId}/pages/${team.id}`, { path: "/people" });
    expect(renamed.status).toBe(200);
    const expected = ABOUT.replace("(/team#lead)", "(/people#lead)")
      .replace('"/team?tab=all"', '"/people?tab=all"')
      .replace('"/team/"', '"/people/"')
      .replace("[t]: /team", "[t]: /people");
    expect((await call("GET", `/api/v1/sites/${siteId}/pages/${about.id}`)).body.page.content).toBe(expected);
    const list = await call("GET", `/api/v1/sites/${siteId}/pages`);
    expect(list.body.pages.find((p: Json) => p.id === about.id).content).toBe(expected);
    await call("POST", `/api/v1/sites/${siteId}/publish`);
    const visitor = await h.call("GET", `/api/v1/public/sites/${slug}/pages/${about.id}`);
    expect(((await visitor.json()) as Json).page.content).toBe(expected);
    // Writing back what was read keeps the references.
    await call("PATCH", `/api/v1/sites/${siteId}/pages/${about.id}`, { content: expected });
    expect(await storedContent(about.id)).toBe(stored);
  });

  test("a rename keeps links working in the layout and in collection link fields", async () => {
    const { siteId } = await newSite();
    const team = await page(siteId, "/team", "# Team");
    await call("PUT", `/api/v1/sites/${siteId}/layout`, {
      layout: {
        logo: null,
        header: {
          navigation: [{ label: "Team", href: "/team", children: [{ label: "Lead", href: "/team#lead" }] }],
        },
        footer: { text: "", links: [{ label: "Team", href: `page:${team.id}` }] },
      },
    });
    await call("PUT", `/api/v1/sites/${siteId}/collections/cards`, {
      name: "Cards",
      fields: [{ key: "target", type: "link", required: true }],
    });
    const item = await call("POST", `/api/v1/sites/${siteId}/collections/cards/items`, {
      values: { target: "/team?x=1" },
    });
    expect(item.body.item.values.target).toBe("/team?x=1");
    await call("PATCH", `/api/v1/sites/${siteId}/pages/${team.id}`, { path: "/crew" });
    const layout = (await call("GET", `/api/v1/sites/${siteId}/layout`)).body.layout;
    expect(layout.header.navigation).toEqual([
      { label: "Team", href: "/crew", children: [{ label: "Lead", href: "/crew#lead" }] },
    ]);
    expect(layout.footer.links).toEqual([{ label: "Team", href: "/crew" }]);
    const items = (await call("GET", `/api/v1/sites/${siteId}/collections/cards/items`)).body.items;
    expect(items[0].values.target).toBe("/crew?x=1");
  });

  test("a link to the page itself resolves at create; invalid MDX is a 400 with line and column", async () => {
    const { siteId } = await newSite();
    const self = await page(siteId, "/self", "[me](/self)");
    expect(await storedContent(self.id)).toBe(`[me](page:${self.id})`);
    const bad = await call("POST", `/api/v1/sites/${siteId}/pages`, {
      path: "/bad",
      title: "Bad",
      content: "# Hi\n\n<Note title= />\n",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({
      field: "content",
      line: expect.any(Number),
      column: expect.any(Number),
    });
  });

  test("broken links: references to deleted pages and paths naming no page, in pages, layout and collections", async () => {
    const { siteId } = await newSite();
    const gone = await page(siteId, "/gone", "# Soon gone");
    const home = (await call("GET", `/api/v1/sites/${siteId}/pages`)).body.pages[0];
    const linking = await page(siteId, "/links", "[gone](/gone) and [nowhere](/nowhere) and [home](/)");
    await call("PUT", `/api/v1/sites/${siteId}/layout`, {
      layout: {
        logo: null,
        header: { navigation: [{ label: "Gone", href: "/gone" }] },
        footer: { text: "", links: [] },
      },
    });
    await call("PUT", `/api/v1/sites/${siteId}/collections/cards`, {
      name: "Cards",
      fields: [{ key: "target", type: "link" }],
    });
    const item = await call("POST", `/api/v1/sites/${siteId}/collections/cards/items`, {
      values: { target: "/gone#x" },
    });
    expect((await call("GET", `/api/v1/sites/${siteId}/links/broken`)).body.links).toEqual([
      { href: "/nowhere", where: { type: "page", id: linking.id } },
    ]);
    expect((await call("DELETE", `/api/v1/sites/${siteId}/pages/${gone.id}`)).status).toBe(204);
    const broken = (await call("GET", `/api/v1/sites/${siteId}/links/broken`)).body.links;
    expect(broken).toEqual([
      { href: `page:${gone.id}`, where: { type: "page", id: linking.id } },
      { href: "/nowhere", where: { type: "page", id: linking.id } },
      { href: `page:${gone.id}`, where: { type: "layout", id: siteId, field: "header.navigation.0.href" } },
      {
        href: `page:${gone.id}#x`,
        where: { type: "collection", id: item.body.item.id, collection: "cards", field: "target" },
      },
    ]);
    // A page created at the missing path mends that link; the home link was never broken.
    await page(siteId, "/nowhere", "# Here now");
    const after = (await call("GET", `/api/v1/sites/${siteId}/links/broken`)).body.links;
    expect(after.map((l: Json) => l.href)).not.toContain("/nowhere");
    expect(home.path).toBe("/");
  });

  test("translate says what each href names now", async () => {
    const { siteId } = await newSite();
    const team = await page(siteId, "/team", "# Team");
    const file = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const res = await call("POST", `/api/v1/sites/${siteId}/links/translate`, {
      hrefs: [
        "/team#lead",
        `page:${team.id}?x=1`,
        "/missing",
        "page:00000000-0000-4000-8000-000000000000",
        file.url,
        `/api/media/site-media/${siteId}/nope.png`,
        "https://example.com/",
        "mailto:hi@example.com",
        "#top",
      ],
    });
    expect(res.status).toBe(200);
    const links = res.body.links;
    expect(links[0]).toEqual({ href: "/team#lead", kind: "page", pageId: team.id, path: "/team#lead" });
    expect(links[1]).toEqual({
      href: `page:${team.id}?x=1`,
      kind: "page",
      pageId: team.id,
      path: "/team?x=1",
    });
    expect(links[2]).toEqual({ href: "/missing", kind: "broken", path: "/missing" });
    expect(links[3]).toMatchObject({ kind: "broken", pageId: "00000000-0000-4000-8000-000000000000" });
    expect(links[4]).toMatchObject({ kind: "media" });
    expect(links[4].url).toStartWith(`${file.url}?k=m.`);
    expect(links[5]).toMatchObject({ kind: "broken" });
    expect(links[6]).toEqual({ href: "https://example.com/", kind: "external", url: "https://example.com/" });
    expect(links[7].kind).toBe("external");
    expect(links[8]).toEqual({ href: "#top", kind: "anchor" });
    const bad = await call("POST", `/api/v1/sites/${siteId}/links/translate`, {
      hrefs: ["/ok", "javascript:alert(1)", "page:nope"],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: Json) => [d.field, d.href])).toEqual([
      ["hrefs.1", "javascript:alert(1)"],
      ["hrefs.2", "page:nope"],
    ]);
    const stranger = await h.seedOrg();
    const foreign = await h.call("POST", `/api/v1/sites/${siteId}/links/translate`, {
      key: stranger.key,
      body: { hrefs: ["/"] },
    });
    expect(foreign.status).toBe(404);
  });
});
