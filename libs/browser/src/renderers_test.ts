import { afterAll, describe, expect, test } from "bun:test";
import { html, LANDING, rendererProcesses, servePages, until } from "../testing/mod.ts";
import { launchChromium } from "./chromium.ts";
import { findBrowser } from "./find_browser.ts";

const chromium = findBrowser(null);
const pages = servePages({ "/": () => html(LANDING) });
afterAll(() => pages.stop());

describe.skipIf(!chromium)("renderer processes of a filming browser (decision 1213)", () => {
  test("a page in a context of its own starts one renderer, and none is started ahead for the next", async () => {
    const launched = await launchChromium(chromium as string, { gpu: false, allowHosts: [pages.host] });
    try {
      const pid = launched.browser.process()?.pid as number;
      // the launch's own blank tab goes first, and its renderer with it (it may start after launch returns)
      for (const page of await launched.browser.pages()) await page.close();
      await until(async () => rendererProcesses(pid).size === 0, 10_000);
      const before = new Set(rendererProcesses(pid).keys());
      for (let film = 0; film < 3; film++) {
        const context = await launched.browser.createBrowserContext();
        const page = await context.newPage();
        await page.goto(pages.url("/"), { waitUntil: "load" });
        await page.screenshot({ type: "png" });
        // a spare renderer would be started now, after the navigation, for the context's next one
        await Bun.sleep(700);
        const started = [...rendererProcesses(pid).keys()].filter((p) => !before.has(p));
        expect(started).toHaveLength(1);
        await context.close();
        // the film's renderer goes with its context: nothing is left running for a context that is gone
        await until(async () => [...rendererProcesses(pid).keys()].every((p) => before.has(p)), 5000);
      }
    } finally {
      await launched.close();
    }
  }, 60_000);
});
