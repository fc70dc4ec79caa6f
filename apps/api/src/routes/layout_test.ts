import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { siteLayouts } from "@site/db";
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

const newSite = async (key = owner.key) => (await h.newSite(key, { name: "Layout" })).id;
const layoutOf = (siteId: string, key = owner.key) =>
  h.call("GET", `/api/v1/sites/${siteId}/layout`, { key });
const put = (siteId: string, body: unknown, ifMatch?: string) =>
  h.call("PUT", `/api/v1/sites/${siteId}/layout`, {
    key: owner.key,
    body,
    headers: ifMatch ? { "if-match": ifMatch } : {},
  });
const storedRow = async (siteId: string) =>
  (await h.db.select().from(siteLayouts).where(eq(siteLayouts.siteId, siteId)))[0]!;

const fullLayout = (over: Record<string, unknown> = {}) => ({
  logo: null,
  header: { navigation: [{ label: "Home", href: "/" }] },
  footer: { text: "© Acme", links: [] },
  ...over,
});

describe("layout and styles", () => {
  test("keep the auth rules", async () => {
    const siteId = await newSite();
    await expectAuthRules(h, {
      method: "GET",
      path: `/api/v1/sites/${siteId}/layout`,
      scope: "content:read",
    });
    await expectAuthRules(h, {
      method: "PUT",
      path: `/api/v1/sites/${siteId}/layout`,
      scope: "content:write",
      body: { styles: { colors: {}, fonts: { heading: "Inter", body: "Inter" } } },
    });
  });

  test("a new site has the default layout and styles, with an ETag", async () => {
    const siteId = await newSite();
    const res = await layoutOf(siteId);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"layout-\d+"$/);
    const body = (await res.json()) as Json;
    expect(body.layout).toEqual({
      logo: null,
      header: { navigation: [{ label: "Home", href: "/" }] },
      footer: { text: "", links: [] },
    });
    expect(body.styles.colors.primary).toMatch(/^#[0-9a-f]{6}$/);
    expect(body.styles.fonts).toEqual({ heading: "Inter", body: "Inter" });
    expect(body.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    // "Home" is stored as a reference to the welcome page, not as the path.
    const row = await storedRow(siteId);
    expect((row.layout as Json).header.navigation[0].href).toMatch(/^page:[0-9a-f-]{36}$/);
  });

  test("a logo is stored bare and read signed with a member grant that opens the file", async () => {
    const siteId = await newSite();
    const file = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const res = await put(siteId, {
      layout: fullLayout({
        logo: file.url,
        header: {
          navigation: [
            { label: "Home", href: "/" },
            {
              label: "Company",
              href: "/#company",
              children: [
                { label: "Careers", href: "https://jobs.example.com" },
                { label: "Contact", href: "mailto:hi@example.com" },
              ],
            },
          ],
        },
        footer: { text: "Made in Berlin", links: [{ label: "Top", href: "#top" }] },
      }),
      styles: {
        colors: { primary: "#FF0066", accent: "#00aa00" },
        fonts: { heading: "Playfair Display", body: "Inter" },
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.layout.logo).toStartWith(`${file.url}?k=m.`);
    expect(body.layout.header.navigation[1]).toEqual({
      label: "Company",
      href: "/#company",
      children: [
        { label: "Careers", href: "https://jobs.example.com" },
        { label: "Contact", href: "mailto:hi@example.com" },
      ],
    });
    expect(body.styles).toEqual({
      colors: { primary: "#FF0066", accent: "#00aa00" },
      fonts: { heading: "Playfair Display", body: "Inter" },
    });
    const row = await storedRow(siteId);
    expect((row.layout as Json).logo).toBe(file.url);
    expect(JSON.stringify(row.layout)).not.toContain("k=");
    const image = await h.call("GET", body.layout.logo);
    expect(image.status).toBe(200);
    // Writing back what was read (a signed logo) stores the bare path again.
    const again = await put(siteId, { layout: { ...body.layout } }, res.headers.get("etag")!);
    expect(again.status).toBe(200);
    expect(((await storedRow(siteId)).layout as Json).logo).toBe(file.url);
  });

  test("a stale If-Match answers 412 PRECONDITION_FAILED and changes nothing", async () => {
    const siteId = await newSite();
    const etag = (await layoutOf(siteId)).headers.get("etag")!;
    const first = await put(siteId, { layout: fullLayout({ footer: { text: "one", links: [] } }) }, etag);
    expect(first.status).toBe(200);
    expect(first.headers.get("etag")).not.toBe(etag);
    const stale = await put(siteId, { layout: fullLayout({ footer: { text: "two", links: [] } }) }, etag);
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as Json).error.code).toBe("PRECONDITION_FAILED");
    expect(((await storedRow(siteId)).layout as Json).footer.text).toBe("one");
    const fresh = await put(
      siteId,
      { layout: fullLayout({ footer: { text: "two", links: [] } }) },
      first.headers.get("etag")!,
    );
    expect(fresh.status).toBe(200);
  });

  test("two writers racing with one ETag: one 200, one 412, never a lost update", async () => {
    const siteId = await newSite();
    for (let round = 0; round < 5; round++) {
      const etag = (await layoutOf(siteId)).headers.get("etag")!;
      const results = await Promise.all(
        ["a", "b"].map((who) =>
          put(siteId, { layout: fullLayout({ footer: { text: `${who}${round}`, links: [] } }) }, etag),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
      const winner = (await results.find((r) => r.status === 200)!.json()) as Json;
      expect(((await storedRow(siteId)).layout as Json).footer.text).toBe(winner.layout.footer.text);
    }
  });

  test("bad input is a 400 naming each field, and nothing is stored", async () => {
    const siteId = await newSite();
    const other = await newSite();
    const foreign = await addLibraryFile(h.ctx, {
      siteId: other,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const before = await storedRow(siteId);
    const many = Array.from({ length: 60 }, (_, i) => ({
      label: `L${i}`,
      href: `/p${i}`,
      children: [{ label: `C${i}`, href: "/" }],
    }));
    const cases: [unknown, string][] = [
      [
        { styles: { colors: { primary: "red" }, fonts: { heading: "Inter", body: "Inter" } } },
        "styles.colors.primary",
      ],
      [
        { styles: { colors: { "Bad Name": "#000000" }, fonts: { heading: "Inter", body: "Inter" } } },
        "styles.colors.Bad Name",
      ],
      [{ styles: { colors: {}, fonts: { heading: "x;}body{", body: "Inter" } } }, "styles.fonts.heading"],
      [{ layout: fullLayout({ header: { navigation: many } }) }, "layout.header.navigation"],
      [
        {
          layout: fullLayout({
            header: {
              navigation: [
                {
                  label: "A",
                  href: "/",
                  children: [{ label: "B", href: "/", children: [{ label: "C", href: "/" }] }],
                },
              ],
            },
          }),
        },
        "layout.header.navigation.0.children.0.children",
      ],
      [
        { layout: fullLayout({ header: { navigation: [{ label: "x".repeat(101), href: "/" }] } }) },
        "layout.header.navigation.0.label",
      ],
      [
        { layout: fullLayout({ header: { navigation: [{ label: "<b>Hi</b>", href: "/" }] } }) },
        "layout.header.navigation.0.label",
      ],
      [
        { layout: fullLayout({ header: { navigation: [{ label: "Evil", href: "javascript:alert(1)" }] } }) },
        "layout.header.navigation.0.href",
      ],
      [
        { layout: fullLayout({ footer: { text: "x", links: [{ label: "Bad", href: "page:not-a-uuid" }] } }) },
        "layout.footer.links.0.href",
      ],
      [{ layout: fullLayout({ logo: "https://cdn.example.com/logo.png" }) }, "layout.logo"],
      [{ layout: fullLayout({ logo: foreign.url }) }, "layout.logo"],
      [{ layout: fullLayout({ logo: `/api/media/site-media/${siteId}/nope.png` }) }, "layout.logo"],
      [{}, "body"],
    ];
    for (const [body, field] of cases) {
      const res = await put(siteId, body);
      expect([res.status, field]).toEqual([400, field]);
      const err = ((await res.json()) as Json).error;
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(err.details.map((d: Json) => d.field)).toContain(field);
    }
    const foreignRes = await put(siteId, { layout: fullLayout({ logo: foreign.url }) });
    expect(((await foreignRes.json()) as Json).error.details[0].message).toContain("another site");
    const after = await storedRow(siteId);
    expect(after.version).toBe(before.version);
    expect(after.layout).toEqual(before.layout);
  });

  test("exactly 100 navigation items on two levels are accepted", async () => {
    const siteId = await newSite();
    const navigation = Array.from({ length: 50 }, (_, i) => ({
      label: "x".repeat(100),
      href: `/p${i}`,
      children: [{ label: `C${i}`, href: "/" }],
    }));
    const res = await put(siteId, { layout: fullLayout({ header: { navigation } }) });
    expect(res.status).toBe(200);
  });

  test("another organization's site answers 404", async () => {
    const siteId = await newSite();
    const stranger = await h.seedOrg();
    expect((await layoutOf(siteId, stranger.key)).status).toBe(404);
    const res = await h.call("PUT", `/api/v1/sites/${siteId}/layout`, {
      key: stranger.key,
      body: { layout: fullLayout() },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).error.code).toBe("NOT_FOUND");
  });
});
