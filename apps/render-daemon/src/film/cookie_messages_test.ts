import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { addressCheckFor, createBrowserPool, createUrlGuard, findFilmBrowser } from "@site/browser";
import { serveSettlePages } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { type ArmedPage, armPage } from "./capture.ts";

setDefaultTimeout(60_000);

// autoconsent's content script talks to the daemon over DevTools (a binding call and its answer each).
// A page with no pop-up needs only its rules (init); state reports stay in the page and rule snippets
// run there (decision 1514): each of them was a round trip through three processes.
const pages = serveSettlePages();
const executablePath = findFilmBrowser({ chromiumPath: null, renderGpu: false, renderHeadlessShell: true });
if (!executablePath) throw new Error("no Chromium");
const pool = createBrowserPool<ArmedPage>({
  executablePath,
  gpu: false,
  allowHosts: [pages.host],
  concurrency: 1,
  prepare: (page) => armPage(page),
  log: createLogger("error"),
});
afterAll(async () => {
  await pool.close();
  pages.stop();
});

/** Loads `path` in an armed page, waits `ms`, and answers the consent handler's message count and find. */
const messagesOf = (path: string, ms: number) =>
  pool.withPage(async (page, _context, armed) => {
    armed.guard.use({
      check: createUrlGuard({
        isBlocked: addressCheckFor({ allowLocalNetworkForDevelopment: false }),
        allowHosts: [pages.host],
      }),
      log: { blocked: [] },
    });
    await page.goto(pages.url(path), { waitUntil: "load" });
    await Bun.sleep(ms);
    const banner = await armed.consent?.settled(3000);
    return { messages: armed.consent?.messages, found: armed.consent?.found, banner };
  });

test("a page with no cookie pop-up sends one message (its rules) over DevTools", async () => {
  expect(await messagesOf("/static", 1500)).toEqual({ messages: 1, found: null, banner: null });
});

test("a page with a pop-up still has it found and dismissed", async () => {
  const r = await messagesOf("/consent", 1500);
  expect(r.found).toBeTruthy();
  expect(r.banner).toBeNull();
});
