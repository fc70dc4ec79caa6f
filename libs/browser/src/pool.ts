import type { Logger } from "@site/config";
import type { BrowserContext, Page } from "puppeteer-core";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";

/** When a page must be given up: a deadline (epoch ms) and/or a signal (a shutdown handing the job back). */
export type PageLimits = { deadline?: number; signal?: AbortSignal };

/** Lends pages from a few Chromium instances; each browser is recycled after `pagesPerBrowser` pages. */
export type BrowserPool<P = undefined> = {
  /**
   * Runs `fn` on a fresh page in an isolated context (with what `prepare` made of it). Past
   * `limits.deadline`, or when `limits.signal` aborts, the page is killed where it stands (its renderer
   * process, not only the call) and the call rejects with a PageDeadlineError (or the signal's reason)
   * without waiting for `fn`.
   */
  withPage<T>(
    fn: (page: Page, context: BrowserContext, prepared: P) => Promise<T>,
    limits?: PageLimits,
  ): Promise<T>;
  /**
   * Launches each slot's browser that is not running, one after another, and runs `fn` on a first page
   * of each (a warm-up draw: a browser's first screenshot sets up its compositing), so that the first
   * renders run side by side find every browser warm. A slot busy meanwhile is left to launch itself.
   */
  warmAll(fn: (page: Page) => Promise<void>): Promise<void>;
  /** Settles when every launched browser's next page is open and prepared (or failed to be). */
  ready(): Promise<void>;
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

type Tab<P> = { context: BrowserContext; page: Page; prepared: P };
type Slot<P> = { launched: LaunchedBrowser | null; pages: number; spare: Promise<Tab<P> | null> | null };

async function openTab<P>(
  launched: LaunchedBrowser,
  prepare: (page: Page, context: BrowserContext) => Promise<P>,
): Promise<Tab<P>> {
  const context = await launched.browser.createBrowserContext();
  try {
    const page = await context.newPage();
    return { context, page, prepared: await prepare(page, context) };
  } catch (err) {
    await context.close().catch(() => {});
    throw err;
  }
}

async function closeTab<P>(tab: Tab<P> | null): Promise<void> {
  if (!tab) return;
  await tab.page.close().catch(() => {});
  await tab.context.close().catch(() => {});
}

/**
 * Builds a pool of `concurrency` slots; browsers launch lazily and restart when they crash. Every film gets
 * a fresh isolated context; the next one is opened (and `prepare`d) as soon as the current film is done
 * (opening and arming a page costs 150–400 ms on a loaded CPU host), so that the next film finds it
 * ready, and a used one is closed after its result is handed back.
 */
export function createBrowserPool<P = undefined>(opts: {
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
  /**
   * Readies each new page before it is lent (what every use needs, whatever it films); its result is
   * handed to `withPage`'s function. A page whose preparation fails is not lent.
   */
  prepare?: (page: Page, context: BrowserContext) => Promise<P>;
  log: Logger;
}): BrowserPool<P> {
  // 100: a browser's memory stayed flat over 200 contexts (326 MiB PSS, decision 1212); a relaunch costs a
  // launch and a cold first film, so fewer of them is CPU for renders
  const perBrowser = opts.pagesPerBrowser ?? 100;
  const prepare = opts.prepare ?? (async () => undefined as P);
  const slots: Slot<P>[] = Array.from({ length: Math.max(1, opts.concurrency) }, () => ({
    launched: null,
    pages: 0,
    spare: null,
  }));
  const free: Slot<P>[] = [...slots];
  const waiters: ((s: Slot<P>) => void)[] = [];
  const closing = new Set<Promise<void>>();
  let closed = false;

  /** A free slot (the last one freed: its browser and spare page are the warmest), or `wanted` if free. */
  const acquire = (wanted?: Slot<P>) =>
    new Promise<Slot<P>>((resolve) => {
      const at = wanted ? free.indexOf(wanted) : free.length - 1;
      if (at >= 0) resolve(free.splice(at, 1)[0] as Slot<P>);
      else waiters.push(resolve);
    });
  const release = (s: Slot<P>) => {
    const next = waiters.shift();
    if (next) next(s);
    else free.push(s);
  };
  const takeSpare = async (s: Slot<P>): Promise<Tab<P> | null> => {
    const spare = s.spare;
    s.spare = null;
    return spare ? spare : null;
  };
  const retire = async (s: Slot<P>) => {
    const old = s.launched;
    await closeTab(await takeSpare(s));
    s.launched = null;
    s.pages = 0;
    await old?.close();
  };
  const prepareSpare = (s: Slot<P>) => {
    const launched = s.launched;
    if (closed || !launched || !launched.browser.connected || s.pages >= perBrowser) return;
    s.spare = openTab(launched, prepare).catch(() => null);
  };
  const closeLater = (tab: Tab<P>) => {
    const p = closeTab(tab).finally(() => closing.delete(p));
    closing.add(p);
  };
  /**
   * Kills a page that will not stop: disposing its browser context makes Chromium end the context's
   * renderer processes at once (measured: ~20 ms for a page in `while(true){}`, where Page.crash never
   * answers); when that does not settle in time the slot's whole browser is SIGKILLed with its process
   * group and the slot relaunches on its next film. Only this film's pages live in the slot's browser.
   */
  const kill = async (s: Slot<P>, tab: Tab<P>) => {
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

  const pool: BrowserPool<P> = {
    async withPage(fn, limits = {}) {
      if (closed) throw new Error("browser pool is closed");
      limits.signal?.throwIfAborted();
      return await lend(await acquire(), fn, limits);
    },
    async warmAll(fn) {
      for (const s of slots) {
        if (closed || s.launched || !free.includes(s)) continue;
        await lend(await acquire(s), fn, {}).catch(() => {});
      }
    },
    async ready() {
      await Promise.all(slots.map((s) => s.spare));
    },
    async close() {
      closed = true;
      await Promise.all([...closing]);
      await Promise.all(slots.map(retire));
    },
  };
  return pool;

  async function lend<T>(
    slot: Slot<P>,
    fn: (page: Page, context: BrowserContext, prepared: P) => Promise<T>,
    limits: PageLimits,
  ): Promise<T> {
    try {
      // the pool may have closed, or the signal aborted, while this waited for its slot
      if (closed) throw new Error("browser pool is closed");
      limits.signal?.throwIfAborted();
      if (slot.launched && (!slot.launched.browser.connected || slot.pages >= perBrowser)) await retire(slot);
      if (!slot.launched) {
        slot.launched = await launchChromium(opts.executablePath, {
          gpu: opts.gpu,
          // filming on a CPU host: SwiftShader compositing costs ~15 % of a film's CPU, for nothing
          softwareCompositing: !opts.gpu,
          allowHosts: opts.allowHosts,
          localNetwork: opts.localNetwork,
          extraCaFile: opts.extraCaFile,
          log: opts.log,
        });
        opts.log.debug("chromium launched");
      }
      const tab = (await takeSpare(slot)) ?? (await openTab(slot.launched, prepare));
      slot.pages++;
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
      const work = fn(tab.page, tab.context, tab.prepared);
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
      // the next page is opened and prepared once this one is done, not during it: on a small host
      // the two would share the CPU, and the film waiting on its result would pay for both
      if (!slot.spare) prepareSpare(slot);
      release(slot);
    }
  }
}
