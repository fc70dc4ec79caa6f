import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { serveSettlePages } from "@site/browser/testing";
import { armedPagePool } from "@site/render-daemon/testing";

setDefaultTimeout(60_000);

// autoconsent's content script talks to the daemon over DevTools (a binding call and its answer each).
// A page with no pop-up needs only its rules (init); state reports stay in the page and rule snippets
// run there (decision 1514): each of them was a round trip through three processes.
const pages = serveSettlePages();
const pool = armedPagePool(pages.host);
afterAll(async () => {
  await pool.close();
  pages.stop();
});

/**
 * Loads `path` in an armed page, waits `ms`, and answers the consent handler's message count, what it
 * found and left undismissed, and whether the fixture's cookie bar is still in the page.
 */
const messagesOf = (path: string, ms: number) =>
  pool.onLoaded(pages.url(path), async (page, armed) => {
    await Bun.sleep(ms);
    const banner = await armed.consent?.settled(3000);
    const bar = await page.$("#gdpr-cookie-consent-bar");
    return { messages: armed.consent?.messages, found: armed.consent?.found, banner, barShown: bar !== null };
  });

test("a page with no cookie pop-up sends one message (its rules) over DevTools", async () => {
  expect(await messagesOf("/static", 1500)).toEqual({
    messages: 1,
    found: null,
    banner: null,
    barShown: false,
  });
});

test("a page with a pop-up still has it found and dismissed", async () => {
  const r = await messagesOf("/consent", 1500);
  expect(r.found).toBe("WP Cookie Notice for GDPR");
  expect(r.banner).toBeNull();
  // its reject button was clicked: the bar removed itself
  expect(r.barShown).toBe(false);
});
