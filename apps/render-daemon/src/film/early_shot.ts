// The shot taken while a settled page's quiet window runs out (issue 35, decision 1513).
import type { CaptureSettings } from "../render_types.ts";
import type { CookieBanners } from "./cookie_banners.ts";
import type { Settling } from "./settle.ts";

/**
 * Whether a film may be shot early: only a page that needs nothing after settling but its shot (no
 * selector to wait for, nothing to hide, no full-page scroll, no delay). Those others change the page
 * after it settles, so their shot is taken after them, as before.
 */
export function canShootEarly(s: CaptureSettings): boolean {
  return !s.waitForSelector && !s.fullPage && !(s.hideSelectors?.length ?? 0) && !((s.delayMs ?? 0) > 0);
}

/**
 * Settling ends with a quiet window (nothing changed for 100 ms: decision 1201) that costs a static page
 * its whole length after `load`. This takes the shot (and the font check) as soon as everything else
 * holds — no request in flight, no short timer, fonts, images decoded, no entrance animation — and
 * keeps it only when the window then passes with the page unchanged since the look that preceded the
 * shot (the same `version`: its last change by its own clock, the same requests): the shot then shows
 * the page exactly as a shot after the window would. Any change after it (a mutation,
 * a layout shift, a request, a cookie pop-up found), or a page the cap cut: null, and the caller settles
 * and shoots as before (what it has settled so far counts).
 */
export async function shootEarly(o: {
  settling: Settling;
  consent: CookieBanners | null;
  /** The captured range's bottom, in CSS pixels. */
  bottom: number;
  deadline: number;
  shoot: () => Promise<Uint8Array>;
  /** Told of the shot as soon as it is taken, before the quiet window has passed. */
  shot?: (png: Uint8Array) => void;
  fonts: () => Promise<string[]>;
}): Promise<{ png: Uint8Array; fonts: string[] } | null> {
  const ready = await o.settling.settle({ bottom: o.bottom, deadline: o.deadline, quietMs: 0 });
  // a pop-up being handled changes the page: settled first, as before
  if (ready.busy || o.consent?.found) return null;
  const [png, fonts] = await Promise.all([
    o.shoot().then((png) => {
      o.shot?.(png);
      return png;
    }),
    o.fonts(),
  ]);
  const quiet = await o.settling.settle({ bottom: o.bottom, deadline: o.deadline });
  // the same version: no mutation, layout shift or request between the look before the shot and the
  // end of the window, by the page's own clock and the daemon's count of requests
  if (quiet.busy || quiet.version !== ready.version || o.consent?.found) return null;
  return { png, fonts };
}
