import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { siteChromeStrings } from "@site/db";
import { CHROME_DEFAULTS } from "@site/domain/sites";
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

const newSite = async () => (await h.newSite(owner.key, { name: "Chrome" })).id;
const read = async (siteId: string, locale?: string) => {
  const res = await h.call("GET", `/api/v1/sites/${siteId}/chrome${locale ? `?locale=${locale}` : ""}`, {
    key: owner.key,
  });
  return { status: res.status, body: (await res.json()) as Json };
};
const put = async (siteId: string, locale: string, strings: unknown) => {
  const res = await h.call("PUT", `/api/v1/sites/${siteId}/chrome/${locale}`, {
    key: owner.key,
    body: { strings },
  });
  return { status: res.status, body: (await res.json()) as Json };
};

describe("chrome strings", () => {
  test("keep the auth rules", async () => {
    const siteId = await newSite();
    await expectAuthRules(h, {
      method: "GET",
      path: `/api/v1/sites/${siteId}/chrome`,
      scope: "content:read",
    });
    await expectAuthRules(h, {
      method: "PUT",
      path: `/api/v1/sites/${siteId}/chrome/de`,
      scope: "content:write",
      body: { strings: { "nav.home": "Start" } },
    });
    await expectAuthRules(h, {
      method: "PATCH",
      path: `/api/v1/sites/${siteId}/chrome`,
      scope: "content:write",
      body: { defaultLocale: "de" },
    });
  });

  test("a new site reads the built-in English text for every shell key", async () => {
    const siteId = await newSite();
    const { status, body } = await read(siteId);
    expect(status).toBe(200);
    expect(body.locale).toBe("en");
    expect(body.defaultLocale).toBe("en");
    expect(body.locales).toEqual(["en"]);
    expect(body.strings).toEqual(CHROME_DEFAULTS);
    for (const area of ["nav.", "footer.", "comingSoon.", "notFound.", "cookieNotice.", "newsletter."])
      expect(Object.keys(body.strings).some((k) => k.startsWith(area))).toBe(true);
  });

  test("per-locale overrides fall back key by key: locale, language, default locale, built-in", async () => {
    const siteId = await newSite();
    expect(
      (await put(siteId, "de", { "nav.home": "Startseite", "footer.copyright": "Alle Rechte vorbehalten." }))
        .status,
    ).toBe(200);
    expect((await put(siteId, "de-CH", { "nav.home": "Heim" })).status).toBe(200);
    expect((await put(siteId, "en", { "cookieNotice.accept": "OK" })).status).toBe(200);
    const swiss = await read(siteId, "de-ch");
    expect(swiss.body.locale).toBe("de-CH");
    expect(swiss.body.locales).toEqual(["de", "de-CH", "en"]);
    expect(swiss.body.strings["nav.home"]).toBe("Heim"); // the locale
    expect(swiss.body.strings["footer.copyright"]).toBe("Alle Rechte vorbehalten."); // its language
    expect(swiss.body.strings["cookieNotice.accept"]).toBe("OK"); // the site's default locale
    expect(swiss.body.strings["notFound.title"]).toBe(CHROME_DEFAULTS["notFound.title"]); // built-in
    const austrian = await read(siteId, "de-AT");
    expect(austrian.body.strings["nav.home"]).toBe("Startseite");
    const french = await read(siteId, "fr");
    expect(french.body.strings["nav.home"]).toBe("Home");
    expect(french.body.strings["cookieNotice.accept"]).toBe("OK");
  });

  test("writes merge; null restores the default; site keys of its own are kept", async () => {
    const siteId = await newSite();
    await put(siteId, "de", {
      "nav.home": "Startseite",
      "newsletter.submit": "Abonnieren",
      "hero.tagline": "Frisch",
    });
    const merged = await put(siteId, "de", { "nav.home": null, "newsletter.title": "Newsletter" });
    expect(merged.status).toBe(200);
    expect(merged.body.locale).toBe("de");
    expect(merged.body.strings["nav.home"]).toBe("Home");
    expect(merged.body.strings["newsletter.submit"]).toBe("Abonnieren");
    expect(merged.body.strings["newsletter.title"]).toBe("Newsletter");
    expect(merged.body.strings["hero.tagline"]).toBe("Frisch");
    const rows = await h.db.select().from(siteChromeStrings).where(eq(siteChromeStrings.siteId, siteId));
    expect(rows.map((r) => r.key).sort()).toEqual(["hero.tagline", "newsletter.submit", "newsletter.title"]);
  });

  test("the default locale decides the fallback; PATCH sets it", async () => {
    const siteId = await newSite();
    await put(siteId, "de", { "nav.home": "Startseite" });
    const res = await h.call("PATCH", `/api/v1/sites/${siteId}/chrome`, {
      key: owner.key,
      body: { defaultLocale: "de" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ locale: "de", defaultLocale: "de", locales: ["de"] });
    expect((await read(siteId, "fr")).body.strings["nav.home"]).toBe("Startseite");
    expect((await read(siteId)).body.locale).toBe("de");
    const bad = await h.call("PATCH", `/api/v1/sites/${siteId}/chrome`, {
      key: owner.key,
      body: { defaultLocale: "german" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.details[0].field).toBe("defaultLocale");
  });

  test("HTML, bad keys, long values and bad locales are refused naming the key, and nothing is stored", async () => {
    const siteId = await newSite();
    const cases: [string, Record<string, unknown>, string][] = [
      ["de", { "footer.copyright": "<b>Alle</b> Rechte" }, "footer.copyright"],
      ["de", { "footer.copyright": "Tom &amp; Jerry" }, "footer.copyright"],
      ["de", { "Footer.Copyright": "x" }, "Footer.Copyright"],
      ["de", { "footer..copyright": "x" }, "footer..copyright"],
      ["de", { "footer.copyright-text": "x" }, "footer.copyright-text"],
      ["de", { [`a.${"b".repeat(100)}`]: "x" }, `a.${"b".repeat(100)}`],
      ["de", { "nav.home": "x".repeat(2001) }, "nav.home"],
    ];
    for (const [locale, strings, key] of cases) {
      const { status, body } = await put(siteId, locale, { "nav.menu": "Menü", ...strings });
      expect([status, key]).toEqual([400, key]);
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.details.map((d: Json) => d.key)).toContain(key);
      expect(body.error.message).toContain(key);
    }
    for (const locale of ["german", "de_DE", "x-private", "en-US-u-ca-buddhist"]) {
      const { status, body } = await put(siteId, locale, { "nav.home": "x" });
      expect([status, body.error.details[0].field]).toEqual([400, "locale"]);
    }
    expect((await read(siteId, "not a locale")).status).toBe(400);
    expect(
      await h.db.select().from(siteChromeStrings).where(eq(siteChromeStrings.siteId, siteId)),
    ).toHaveLength(0);
    // Plain text with <, > and & that is not markup is fine; it is escaped wherever shown.
    const ok = await put(siteId, "de", { "footer.copyright": "5 < 6 & 7 > 3 — Tom & Jerry" });
    expect(ok.status).toBe(200);
  });

  test("another organization's site answers 404", async () => {
    const siteId = await newSite();
    const stranger = await h.seedOrg();
    const res = await h.call("PUT", `/api/v1/sites/${siteId}/chrome/de`, {
      key: stranger.key,
      body: { strings: { "nav.home": "x" } },
    });
    expect(res.status).toBe(404);
    expect((await h.call("GET", `/api/v1/sites/${siteId}/chrome`, { key: stranger.key })).status).toBe(404);
  });
});
