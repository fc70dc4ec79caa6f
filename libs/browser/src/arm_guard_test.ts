import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { html, servePages } from "../testing/mod.ts";
import { armGuard, createUrlGuard, type GuardLog, isBlockedAddress } from "./address_guard.ts";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";
import { findBrowser } from "./find_browser.ts";

// A spare page of the pool is armed before its film is known: until the film gives the guard its rules,
// the page may reach nothing.
describe.skipIf(!findBrowser(null))("a page armed ahead", () => {
  const pages = servePages({ "/": () => html("<p>hello</p>") });
  let launched: LaunchedBrowser;

  beforeAll(async () => {
    launched = await launchChromium(findBrowser(null) as string, { gpu: false, allowHosts: [pages.host] });
  });
  afterAll(async () => {
    await launched?.close();
    pages.stop();
  });

  // Chromium commits its error page for a refused navigation a few ms after `goto` rejects; the next
  // navigation waits for it, or that late commit replaces the page it loaded.
  async function refused(page: Page, url: string): Promise<void> {
    await expect(page.goto(url)).rejects.toThrow(/ERR_BLOCKED_BY_CLIENT/);
    await page.waitForFunction(() => location.href.startsWith("chrome-error:"), { timeout: 5000 });
  }

  test("refuses every request until its rules are given, then follows them", async () => {
    const context = await launched.browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const guard = await armGuard(page);
      await refused(page, pages.url("/"));
      expect(pages.hits.get("/") ?? 0).toBe(0);

      const log: GuardLog = { blocked: [] };
      guard.use({ check: createUrlGuard({ isBlocked: isBlockedAddress, allowHosts: [] }), log });
      // loopback is not public: refused by the rules now in force, and named
      await refused(page, pages.url("/"));
      expect(log.blocked).toEqual([pages.url("/")]);
      expect(pages.hits.get("/") ?? 0).toBe(0);

      guard.use({ check: createUrlGuard({ isBlocked: isBlockedAddress, allowHosts: [pages.host] }), log });
      const res = await page.goto(pages.url("/"));
      expect(res?.status()).toBe(200);
      expect(await page.evaluate(() => document.body.textContent)).toBe("hello");
      expect(pages.hits.get("/")).toBe(1);
    } finally {
      await context.close();
    }
  });
});
