import type { Logger } from "@site/config";
import type { BrowserContext, Page } from "puppeteer-core";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";

/** When a page must be given up: a deadline (epoch ms) and/or a signal (a shutdown handing the job back). */
export type PageLimits = { deadline?: number; signal?: AbortSignal };

/** Lends pages from a few Chromium instances; each browser is recycled after `pagesPerBrowser` pages. */
export type BrowserPool = {
  /**
   * Runs `fn` on a fresh page in an isolated context. Past `limits.deadline`, or when `limits.signal`
   * aborts, the page is killed where it stands (its renderer process, not only the call) and the call
   * rejects with a PageDeadlineError (or the signal's reason) without waiting for `fn`.
   */
  withPage<T>(fn: (page: Page, context: BrowserContext) => Promise<T>, limits?: PageLimits): Promise<T>;
  close(): Promise<void>;
};

/** A page that was still busy at its deadline; it was killed. */
export class PageDeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`the page was still busy after ${ms} ms`);
    this.name = "PageDeadlineError";
  }
}

/** How long disposing a context may take before the whole browser is killed instead. */
const DISPOSE_GRACE_MS = 2000;

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
  /** FETCH_ALLOW_HOSTS, for each browser's egress proxy. */
  allowHosts: readonly string[];
  /** ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT, for each browser's egress proxy. */
  localNetwork?: boolean;
  /** NODE_EXTRA_CA_CERTS, trusted by each browser. */
  extraCaFile?: string | null;
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
  /**
   * Kills a page that will not stop: disposing its browser context makes Chromium end the context's
   * renderer processes at once (measured: ~20 ms for a page in `while(true){}`, where Page.crash never
   * answers); when that does not settle in time the slot's whole browser is SIGKILLed with its process
   * group and the slot relaunches on its next film. Only this film's pages live in the slot's browser.
   */
  const kill = async (s: Slot, tab: Tab) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((r) => {
      timer = setTimeout(() => r("late"), DISPOSE_GRACE_MS);
    });
    const disposed = tab.context.close().then(
      () => "ok" as const,
      () => "failed" as const,
    );
    const outcome = await Promise.race([disposed, late]);
    clearTimeout(timer);
    if (outcome === "ok" && s.launched?.browser.connected) return;
    opts.log.warn("a page did not close; killing its browser", { outcome });
    s.launched?.kill();
    await retire(s);
  };

  return {
    async withPage(fn, limits = {}) {
      if (closed) throw new Error("browser pool is closed");
      limits.signal?.throwIfAborted();
      const slot = await acquire();
      try {
        if (slot.launched && (!slot.launched.browser.connected || slot.pages >= perBrowser))
          await retire(slot);
        if (!slot.launched) {
          slot.launched = await launchChromium(opts.executablePath, {
            gpu: opts.gpu,
            allowHosts: opts.allowHosts,
            localNetwork: opts.localNetwork,
            extraCaFile: opts.extraCaFile,
            log: opts.log,
          });
          opts.log.debug("chromium launched");
        }
        const tab = (await takeSpare(slot)) ?? (await openTab(slot.launched));
        slot.pages++;
        prepareSpare(slot);
        let timer: ReturnType<typeof setTimeout> | undefined;
        let onAbort: (() => void) | undefined;
        const stop = new Promise<never>((_, reject) => {
          if (limits.deadline !== undefined) {
            const ms = limits.deadline - Date.now();
            timer = setTimeout(() => reject(new PageDeadlineError(ms)), Math.max(0, ms));
          }
          onAbort = () => reject(limits.signal?.reason ?? new Error("aborted"));
          limits.signal?.addEventListener("abort", onAbort, { once: true });
        });
        const work = fn(tab.page, tab.context);
        let killed = false;
        try {
          return await Promise.race([work, stop]);
        } catch (err) {
          if (err instanceof PageDeadlineError || limits.signal?.aborted) {
            killed = true;
            // The film's own promise settles (rejects) once its target is gone; nobody waits for it.
            work.catch(() => {});
            await kill(slot, tab);
          }
          throw err;
        } finally {
          clearTimeout(timer);
          if (onAbort) limits.signal?.removeEventListener("abort", onAbort);
          if (!killed) closeLater(tab);
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
