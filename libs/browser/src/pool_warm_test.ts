import { describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import type { Browser } from "puppeteer-core";
import { findBrowser } from "./find_browser.ts";
import { createBrowserPool } from "./pool.ts";

const chromium = findBrowser(null);
const log = createLogger("silent" as never);

describe.skipIf(!chromium)("the browser pool's warm-up", () => {
  test("warmAll launches every slot's browser once, one after another; side-by-side pages then find them running", async () => {
    const pool = createBrowserPool({
      executablePath: chromium as string,
      gpu: false,
      allowHosts: [],
      concurrency: 2,
      log,
    });
    try {
      const warmed: Browser[] = [];
      let inWarmUp = 0;
      let most = 0;
      await pool.warmAll(async (page) => {
        inWarmUp++;
        most = Math.max(most, inWarmUp);
        await page.setContent("<p>warm</p>");
        await page.screenshot({ type: "png" });
        warmed.push(page.browser());
        inWarmUp--;
      });
      expect(warmed).toHaveLength(2);
      expect(warmed[0]).not.toBe(warmed[1]);
      expect(most).toBe(1);
      await pool.ready();
      // a second warm-up has nothing left to launch
      let again = 0;
      await pool.warmAll(async () => {
        again++;
      });
      expect(again).toBe(0);
      // two pages at once: each on one of the warmed browsers, no third launch
      const used = await Promise.all(
        [0, 1].map(() =>
          pool.withPage(async (page) => {
            await Bun.sleep(200);
            return page.browser();
          }),
        ),
      );
      expect(new Set(used)).toEqual(new Set(warmed));
    } finally {
      await pool.close();
    }
  }, 60_000);
});
