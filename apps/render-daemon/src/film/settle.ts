// Settling: wait as long as the page needs, not a fixed time (issue 12, decision 1201).
import type { HTTPRequest, Page } from "puppeteer-core";

/** How settling is bounded, in milliseconds. */
export type SettleLimits = {
  /** No DOM mutation, layout shift or request start/end for this long. */
  quietMs: number;
  /** The most settling may take; past it the page is filmed as it is, with a warning. */
  capMs: number;
  /** Timers shorter than this that are still pending keep the page unsettled (a fetch after 300 ms). */
  shortTimerMs: number;
  /** A request open longer than this is a long poll or a stream: it no longer counts as in flight. */
  longRequestMs: number;
  /**
   * A finite CSS animation or transition that ends within this long keeps the page unsettled (an
   * entrance fade); a longer or endless one (a spinner, a marquee) is part of the page.
   */
  animationMs: number;
};

export const DEFAULT_SETTLE: SettleLimits = {
  quietMs: 100,
  capMs: 10_000,
  shortTimerMs: 1_000,
  longRequestMs: 8_000,
  animationMs: 2_000,
};

/** The source name of scripts we add to a page (autoconsent): their timers are not the page's to wait for. */
export const OWN_SCRIPT = "site-render-injected.js";

/**
 * Installed before the page's own scripts: records the last DOM mutation or layout shift, the short
 * timers still pending, and answers which images in a range are not yet loaded and decoded.
 */
const PROBE = (shortTimerMs: number, ownScript: string, animationMs: number) => {
  const w = window as unknown as Record<string, unknown>;
  if (w.__settle) return;
  let last = performance.now();
  const touch = () => {
    last = performance.now();
  };
  const pending = new Set<unknown>();
  const setT = window.setTimeout.bind(window);
  const clearT = window.clearTimeout.bind(window);
  window.setTimeout = ((fn: TimerHandler, ms?: number, ...args: unknown[]) => {
    if (typeof fn !== "function" || (ms ?? 0) > shortTimerMs) return setT(fn, ms, ...args);
    // our own injected scripts' timers (cookie pop-up handling) do not hold the page up
    if (new Error().stack?.includes(ownScript)) return setT(fn, ms, ...args);
    const id = setT(
      (...a: unknown[]) => {
        pending.delete(id);
        touch();
        (fn as (...x: unknown[]) => void)(...a);
      },
      ms,
      ...args,
    );
    pending.add(id);
    return id;
  }) as typeof window.setTimeout;
  window.clearTimeout = ((id?: number) => {
    pending.delete(id);
    clearT(id);
  }) as typeof window.clearTimeout;
  // autoconsent's pre-hiding sheet (added as it starts, removed when it is done) is ours, not the page's:
  // it only fades what may be a cookie pop-up until the pop-up is handled (cookie_banners.ts)
  const ours = (n: Node | null) => n?.nodeName === "STYLE" && (n as Element).id === "autoconsent-prehide";
  new MutationObserver((records) => {
    for (const r of records) {
      if (ours(r.target.nodeType === 3 ? r.target.parentNode : r.target)) continue;
      const nodes = [...Array.from(r.addedNodes), ...Array.from(r.removedNodes)];
      if (r.type === "childList" && nodes.length > 0 && nodes.every(ours)) continue;
      return touch();
    }
  }).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    characterData: true,
  });
  try {
    new PerformanceObserver(touch).observe({ type: "layout-shift", buffered: true });
  } catch {}
  const decoded = new WeakSet<HTMLImageElement>();
  const decoding = new WeakSet<HTMLImageElement>();
  w.__settle = {
    state(bottom: number) {
      let images = 0;
      for (const img of Array.from(document.images)) {
        if (!img.getAttribute("src") && !img.currentSrc) continue;
        const r = img.getBoundingClientRect();
        const top = r.top + scrollY;
        if (r.width === 0 || r.height === 0 || top > bottom || top + r.height < 0) continue;
        if (!img.complete) {
          images++;
          continue;
        }
        if (img.naturalWidth === 0 || decoded.has(img)) continue; // broken images do not wait
        images++;
        if (!decoding.has(img)) {
          decoding.add(img);
          img.decode().then(
            () => decoded.add(img),
            () => decoded.add(img),
          );
        }
      }
      let animations = 0;
      try {
        for (const a of document.getAnimations()) {
          if (a.playState !== "running") continue;
          const t = a.effect?.getComputedTiming();
          const left = Number(t?.endTime ?? Number.POSITIVE_INFINITY) - Number(t?.localTime ?? 0);
          if (Number.isFinite(left) && left <= animationMs) animations++;
        }
      } catch {}
      return {
        last,
        sinceChange: performance.now() - last,
        animations,
        timers: pending.size,
        fonts: document.fonts.status === "loaded",
        images,
        ready: document.readyState,
      };
    },
  };
};

/** Watches a page from before navigation: requests in flight, and the probe in every document. */
export async function watchSettling(page: Page, limits: SettleLimits = DEFAULT_SETTLE) {
  const inflight = new Map<HTTPRequest, number>();
  let lastNet = Date.now();
  /** Requests started or ended so far. */
  let netEvents = 0;
  const start = (r: HTTPRequest) => {
    const type = r.resourceType();
    if (type === "eventsource" || type === "websocket" || type === "ping") return;
    inflight.set(r, Date.now());
    lastNet = Date.now();
    netEvents++;
  };
  const end = (r: HTTPRequest) => {
    if (inflight.delete(r)) {
      lastNet = Date.now();
      netEvents++;
    }
  };
  page.on("request", start);
  page.on("requestfinished", end);
  page.on("requestfailed", end);
  await page.evaluateOnNewDocument(PROBE, limits.shortTimerMs, OWN_SCRIPT, limits.animationMs);

  return {
    /**
     * Waits until no request is in flight, no short timer is pending, fonts are loaded, the images
     * within `bottom` CSS px of the top are loaded and decoded, no entrance animation is running, and
     * nothing changed for `quietMs` (`opts.quietMs`: 0 waits for the rest only); or until the cap (or
     * `deadline`). Returns how long it took, when the cap cut it what was still busy, and `version`:
     * the page's last change as the page's own clock read it, with the requests seen so far — two
     * settlings with the same version saw no change between them (early_shot.ts).
     */
    async settle(opts: {
      bottom: number;
      deadline?: number;
      quietMs?: number;
      /** When this settling began (epoch ms), if an earlier call began it: the cap counts from it. */
      since?: number;
    }): Promise<{ ms: number; busy: string[] | null; version: string }> {
      const quietMs = opts.quietMs ?? limits.quietMs;
      const t0 = opts.since ?? Date.now();
      const capAt = Math.min(t0 + limits.capMs, opts.deadline ?? Number.POSITIVE_INFINITY);
      let busy: string[] = [];
      for (;;) {
        const now = Date.now();
        for (const [r, at] of inflight) if (now - at > limits.longRequestMs) inflight.delete(r);
        const s = (await page
          .evaluate(
            (b: number) =>
              (
                window as unknown as { __settle?: { state(b: number): Record<string, unknown> } }
              ).__settle?.state(b) ?? null,
            opts.bottom,
          )
          .catch(() => null)) as {
          last: number;
          sinceChange: number;
          timers: number;
          fonts: boolean;
          images: number;
          animations: number;
          ready: string;
        } | null;
        busy = [];
        let quietFor = 0;
        if (inflight.size > 0) busy.push(`${inflight.size} request(s) in flight`);
        if (!s) busy.push("the document was not ready");
        else {
          if (s.ready !== "complete") busy.push("the document was still loading");
          if (s.timers > 0) busy.push(`${s.timers} short timer(s) pending`);
          if (!s.fonts) busy.push("web fonts loading");
          if (s.images > 0) busy.push(`${s.images} image(s) not yet shown`);
          if (s.animations > 0) busy.push(`${s.animations} animation(s) running`);
          quietFor = Math.min(s.sinceChange, Date.now() - lastNet);
          if (quietFor < quietMs) busy.push("the page kept changing");
        }
        const version = `${s?.last ?? "none"}:${netEvents}`;
        if (busy.length === 0) return { ms: Date.now() - t0, busy: null, version };
        if (Date.now() >= capAt) return { ms: Date.now() - t0, busy, version };
        // Only the quiet window left to run: look again just as it ends rather than at the next poll.
        const poll = busy.length === 1 && quietFor < quietMs ? quietMs - quietFor + 2 : 40;
        await Bun.sleep(Math.min(40, poll, Math.max(5, capAt - Date.now())));
      }
    },
    stop() {
      page.off("request", start);
      page.off("requestfinished", end);
      page.off("requestfailed", end);
    },
  };
}

/** A page's settling watch (watchSettling). */
export type Settling = Awaited<ReturnType<typeof watchSettling>>;
