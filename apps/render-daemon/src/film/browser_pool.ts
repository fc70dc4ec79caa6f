import type { Logger } from "@site/config";
import type { BrowserContext, Page } from "puppeteer-core";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";

/** Lends pages from a few Chromium instances; each browser is recycled after `pagesPerBrowser` pages. */
export type BrowserPool = {
  withPage<T>(fn: (page: Page, context: BrowserContext) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

type Slot = { launched: LaunchedBrowser | null; pages: number };

/** Builds a pool of `concurrency` slots; browsers launch lazily and restart when they crash. */
export function createBrowserPool(opts: {
  executablePath: string;
  gpu: boolean;
  concurrency: number;
  pagesPerBrowser?: number;
  log: Logger;
}): BrowserPool {
  const perBrowser = opts.pagesPerBrowser ?? 50;
  const slots: Slot[] = Array.from({ length: Math.max(1, opts.concurrency) }, () => ({
    launched: null,
    pages: 0,
  }));
  const free: Slot[] = [...slots];
  const waiters: ((s: Slot) => void)[] = [];
  let closed = false;

  const acquire = () =>
    new Promise<Slot>((resolve) => {
      const s = free.pop();
      if (s) resolve(s);
      else waiters.push(resolve);
    });
  const release = (s: Slot) => {
    const next = waiters.shift();
    if (next) next(s);
    else free.push(s);
  };
  const retire = async (s: Slot) => {
    const old = s.launched;
    s.launched = null;
    s.pages = 0;
    await old?.close();
  };

  return {
    async withPage(fn) {
      if (closed) throw new Error("browser pool is closed");
      const slot = await acquire();
      try {
        if (slot.launched && (!slot.launched.browser.connected || slot.pages >= perBrowser))
          await retire(slot);
        if (!slot.launched) {
          slot.launched = await launchChromium(opts.executablePath, opts.gpu);
          opts.log.debug("chromium launched");
        }
        slot.pages++;
        const context = await slot.launched.browser.createBrowserContext();
        try {
          const page = await context.newPage();
          try {
            return await fn(page, context);
          } finally {
            await page.close().catch(() => {});
          }
        } finally {
          await context.close().catch(() => {});
        }
      } finally {
        if (slot.launched && !slot.launched.browser.connected) await retire(slot);
        release(slot);
      }
    },
    async close() {
      closed = true;
      await Promise.all(slots.map(retire));
    },
  };
}
