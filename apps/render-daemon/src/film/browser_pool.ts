import type { Logger } from "@site/config";
import type { BrowserContext, Page } from "puppeteer-core";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";

/** Lends pages from a few Chromium instances; each browser is recycled after `pagesPerBrowser` pages. */
export type BrowserPool = {
  withPage<T>(fn: (page: Page, context: BrowserContext) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

type Tab = { context: BrowserContext; page: Page };
type Slot = { launched: LaunchedBrowser | null; pages: number; spare: Promise<Tab | null> | null };

async function openTab(launched: LaunchedBrowser): Promise<Tab> {
  const context = await launched.browser.createBrowserContext();
  try {
    return { context, page: await context.newPage() };
  } catch (err) {
    await context.close().catch(() => {});
    throw err;
  }
}

async function closeTab(tab: Tab | null): Promise<void> {
  if (!tab) return;
  await tab.page.close().catch(() => {});
  await tab.context.close().catch(() => {});
}

/**
 * Builds a pool of `concurrency` slots; browsers launch lazily and restart when they crash. Every film gets
 * a fresh isolated context; the next one is opened while the current film runs (opening a page costs
 * ~150 ms on a CPU host), and a used one is closed after its result is handed back.
 */
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
    spare: null,
  }));
  const free: Slot[] = [...slots];
  const waiters: ((s: Slot) => void)[] = [];
  const closing = new Set<Promise<void>>();
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
  const takeSpare = async (s: Slot): Promise<Tab | null> => {
    const spare = s.spare;
    s.spare = null;
    return spare ? spare : null;
  };
  const retire = async (s: Slot) => {
    const old = s.launched;
    await closeTab(await takeSpare(s));
    s.launched = null;
    s.pages = 0;
    await old?.close();
  };
  const prepareSpare = (s: Slot) => {
    const launched = s.launched;
    if (closed || !launched || !launched.browser.connected || s.pages >= perBrowser) return;
    s.spare = openTab(launched).catch(() => null);
  };
  const closeLater = (tab: Tab) => {
    const p = closeTab(tab).finally(() => closing.delete(p));
    closing.add(p);
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
        const tab = (await takeSpare(slot)) ?? (await openTab(slot.launched));
        slot.pages++;
        prepareSpare(slot);
        try {
          return await fn(tab.page, tab.context);
        } finally {
          closeLater(tab);
        }
      } finally {
        if (slot.launched && !slot.launched.browser.connected) await retire(slot);
        release(slot);
      }
    },
    async close() {
      closed = true;
      await Promise.all([...closing]);
      await Promise.all(slots.map(retire));
    },
  };
}
