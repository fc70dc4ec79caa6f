// A browser pool whose pages are armed as the daemon's are (guard, settling probe, autoconsent), for tests
// of what happens in one page between its navigation and its shot.
import { addressCheckFor, createBrowserPool, createUrlGuard, findFilmBrowser } from "@site/browser";
import { createLogger } from "@site/config";
import type { Page } from "puppeteer-core";
import { type ArmedPage, armPage } from "../src/film/capture.ts";

/** Pages of one headless shell, armed ahead like the daemon's, allowed to reach `host` only. */
export function armedPagePool(host: string) {
  const executablePath = findFilmBrowser({ chromiumPath: null, renderGpu: false, renderHeadlessShell: true });
  if (!executablePath) throw new Error("no Chromium");
  const pool = createBrowserPool<ArmedPage>({
    executablePath,
    gpu: false,
    allowHosts: [host],
    concurrency: 1,
    prepare: (page) => armPage(page),
    log: createLogger("error"),
  });
  return {
    /** Loads `url` in an armed page (its guard given the film's rules, as a film does) and runs `fn` there. */
    onLoaded<T>(url: string, fn: (page: Page, armed: ArmedPage) => Promise<T>): Promise<T> {
      return pool.withPage(async (page, _context, armed) => {
        armed.guard.use({
          check: createUrlGuard({
            isBlocked: addressCheckFor({ allowLocalNetworkForDevelopment: false }),
            allowHosts: [host],
          }),
          log: { blocked: [] },
        });
        await page.goto(url, { waitUntil: "load" });
        return fn(page, armed);
      });
    },
    close: () => pool.close(),
  };
}
