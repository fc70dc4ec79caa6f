import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { serveSettlePages } from "@site/browser/testing";
import { armedPagePool } from "@site/render-daemon/testing";
import type { Page } from "puppeteer-core";
import { canShootEarly, shootEarly } from "./early_shot.ts";

setDefaultTimeout(60_000);

const pages = serveSettlePages();
const pool = armedPagePool(pages.host);

afterAll(async () => {
  await pool.close();
  pages.stop();
});

/** Loads the static fixture in an armed page (as a film does) and tries an early shot with `shoot`. */
const earlyShotOf = (shoot: (page: Page) => Promise<Uint8Array>) =>
  pool.onLoaded(pages.url("/static"), (page, armed) =>
    shootEarly({
      settling: armed.settling,
      consent: armed.consent,
      bottom: 600,
      deadline: Date.now() + 20_000,
      shoot: () => shoot(page),
      fonts: async () => [],
    }),
  );

const screenshot = async (page: Page) => new Uint8Array(await page.screenshot({ type: "png" }));

describe("an early shot (taken while the quiet window runs)", () => {
  test("is kept when nothing changed after it began", async () => {
    let taken: Uint8Array | null = null;
    const early = await earlyShotOf(async (page) => {
      taken = await screenshot(page);
      return taken;
    });
    expect(early).not.toBeNull();
    expect(early?.png).toBe(taken as unknown as Uint8Array);
  });

  test("is not kept when the page's document changed after it began", async () => {
    const early = await earlyShotOf(async (page) => {
      const png = await screenshot(page);
      await page.evaluate(() => document.body.append("changed"));
      return png;
    });
    expect(early).toBeNull();
  });

  test("is not kept when the page started a request after it began", async () => {
    const early = await earlyShotOf(async (page) => {
      const png = await screenshot(page);
      await page.evaluate(() => fetch("/static").then((r) => r.text()));
      return png;
    });
    expect(early).toBeNull();
  });

  test("is taken only for a film that needs nothing after settling but its shot", () => {
    const plain = {
      url: "https://example.com/",
      viewportWidth: 800,
      viewportHeight: 600,
      deviceScaleFactor: 1,
      fullPage: false,
      theme: "light" as const,
    };
    expect(canShootEarly(plain)).toBe(true);
    expect(canShootEarly({ ...plain, fullPage: true })).toBe(false);
    expect(canShootEarly({ ...plain, waitForSelector: "#x" })).toBe(false);
    expect(canShootEarly({ ...plain, hideSelectors: [".promo"] })).toBe(false);
    expect(canShootEarly({ ...plain, delayMs: 500 })).toBe(false);
    expect(canShootEarly({ ...plain, hideSelectors: [], delayMs: 0 })).toBe(true);
  });
});
