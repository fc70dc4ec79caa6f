import { type ArmedGuard, armGuard, type GuardLog, type UrlGuard, watchRefusals } from "@site/browser";
import { CAPTURE_LIMITS, DEFAULT_CAPTURE } from "@site/domain/screenshots";
import type { EgressRefusal } from "@site/net";
import { PermanentJobError } from "@site/queue";
import type { BrowserContext, CookieData, Page } from "puppeteer-core";
import type { Capture, CaptureSettings } from "../render_types.ts";
import { isAdRequest } from "./ad_block.ts";
import { type CookieBanners, handleCookieBanners } from "./cookie_banners.ts";
import { canShootEarly, shootEarly } from "./early_shot.ts";
import { missingFontWarnings } from "./font_check.ts";
import { detectLoginRedirect } from "./login_detection.ts";
import { DEFAULT_SETTLE, type SettleLimits, type Settling, watchSettling } from "./settle.ts";

/**
 * A film that failed this time (the page did not load): retried. A film that cannot succeed (a bad URL,
 * an address that is not public, a host that does not resolve) throws PermanentJobError instead.
 */
export class FilmError extends Error {
  override readonly name = "FilmError";
}

/**
 * Time limits for one film, in milliseconds; `settle` bounds each settling (see settle.ts). `trace`, when
 * given, is told as each phase of the film ends (scripts/bench/film.ts times them).
 */
export type FilmTimings = {
  navigation: number;
  total: number;
  settle: SettleLimits;
  trace?: (phase: string) => void;
};

/** The defaults: 30 s to load, settling as long as the page needs up to 10 s, 60 s in all. */
export const DEFAULT_TIMINGS: FilmTimings = {
  navigation: 30_000,
  total: 60_000,
  settle: DEFAULT_SETTLE,
};

/** The tallest full-page capture in CSS pixels (and never more than 16384 device pixels). */
export const MAX_PAGE_HEIGHT = 12_000;

function isCookie(c: unknown): c is CookieData {
  return typeof c === "object" && c !== null && typeof (c as CookieData).name === "string" && "value" in c;
}

async function applySession(page: Page, context: BrowserContext, s: CaptureSettings): Promise<void> {
  const cookies = (s.cookies ?? []).filter(isCookie);
  if (cookies.length > 0) {
    const ctx = context as BrowserContext & { setCookie?: (...c: CookieData[]) => Promise<void> };
    if (typeof ctx.setCookie === "function") await ctx.setCookie(...cookies);
    else await page.setCookie(...cookies);
  }
  if (s.localStorage && Object.keys(s.localStorage).length > 0) {
    await page.evaluateOnNewDocument((stores: Record<string, Record<string, string>>) => {
      const items = stores[location.origin];
      if (!items) return;
      try {
        for (const [k, v] of Object.entries(items)) localStorage.setItem(k, v);
      } catch {}
    }, s.localStorage);
  }
}

/** Scrolls down the page a screen at a time so lazy images and sections load, then back to the top. */
async function scrollThrough(page: Page, maxHeight: number): Promise<void> {
  await page
    .evaluate(async (limit: number) => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const step = Math.max(200, Math.floor(innerHeight * 0.8));
      for (let y = 0; y < Math.min(document.documentElement.scrollHeight, limit); y += step) {
        scrollTo(0, y);
        await frame();
      }
      scrollTo(0, 0);
      await frame();
    }, maxHeight)
    .catch(() => {});
}

/** The warning of a settling the cap cut short. */
function settleWarning(ms: number, busy: string[]): string {
  return `the page had not settled after ${(ms / 1000).toFixed(1)} s (${busy.join(", ")}); it was filmed as it was`;
}

/** The viewport and theme a page is armed with ahead of its film: the capture settings' defaults. */
export const USUAL_VIEWPORT = {
  width: DEFAULT_CAPTURE.viewportWidth,
  height: DEFAULT_CAPTURE.viewportHeight,
  deviceScaleFactor: DEFAULT_CAPTURE.deviceScaleFactor,
};

type Viewport = { width: number; height: number; deviceScaleFactor: number };

function sameViewport(a: Partial<Viewport> | null, b: Viewport): boolean {
  return (
    !!a && a.width === b.width && a.height === b.height && (a.deviceScaleFactor ?? 1) === b.deviceScaleFactor
  );
}

/**
 * What a film needs in its page before navigation that does not depend on what is filmed: the request
 * guard (its rules given per film; every request refused until then), the settling probe, autoconsent
 * (taken out again for a film with hideCookieBanners: false), and a viewport and a theme.
 */
export type ArmedPage = {
  guard: ArmedGuard;
  settling: Settling;
  consent: CookieBanners | null;
  theme: "light" | "dark";
};

/**
 * Arms a page: the pool does it for each spare page while the previous film runs (with the usual
 * viewport and theme), so that a film starts with one round trip or none.
 */
export async function armPage(
  page: Page,
  opts: {
    settle?: SettleLimits;
    cookieBanners?: boolean;
    theme?: "light" | "dark";
    viewport?: Viewport;
  } = {},
): Promise<ArmedPage> {
  const theme = opts.theme ?? "light";
  const [guard, settling, consent] = await Promise.all([
    armGuard(page),
    watchSettling(page, opts.settle ?? DEFAULT_SETTLE),
    opts.cookieBanners === false ? null : handleCookieBanners(page),
    page.setViewport(opts.viewport ?? USUAL_VIEWPORT),
    page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: theme }]),
  ]);
  return { guard, settling, consent, theme };
}

/** What pages commonly draw: text, gradients (and gradient text), rounded corners, shadows, blur, opacity, transforms. */
const WARM_PAGE = `<div style="font:16px system-ui,sans-serif;padding:24px">
<h1 style="font-size:60px;background:linear-gradient(90deg,#5b5bf6,#22c1a4);-webkit-background-clip:text;background-clip:text;color:transparent">Warm 😀 漢字</h1>
<p style="font:19px serif;text-shadow:0 1px 2px rgba(0,0,0,.3)">text ✓ ★ → ☰ ✉ © ™ ▼ ✔ ❤ ☀</p>
<a style="display:inline-block;padding:11px 18px;border-radius:10px;background:#5b5bf6;color:#fff;box-shadow:0 6px 18px -6px #5b5bf6">button</a>
<div style="margin:24px;height:160px;border:1px solid #e6e8f0;border-radius:16px;background:#f6f7fb;box-shadow:0 30px 60px -30px rgba(20,24,60,.35),0 2px 4px rgba(0,0,0,.1)"></div>
<div style="height:80px;width:300px;border-radius:50%;background:radial-gradient(#fff,#f5a524);opacity:.8;transform:rotate(3deg);filter:blur(2px)"></div>
<div style="height:60px;backdrop-filter:blur(8px);background:rgba(255,255,255,.5)"></div></div>`;

/**
 * Draws and captures what pages commonly show (WARM_PAGE) in a page of a new browser, without
 * navigating (nothing loaded, nothing filmed): the first frames of a browser compile its raster and
 * compositing shaders (seconds on SwiftShader under load), which a daemon pays at start rather than in
 * its first render.
 */
export async function warmPage(page: Page): Promise<void> {
  await page.evaluate((body: string) => {
    document.body.innerHTML = body;
  }, WARM_PAGE);
  await page.screenshot({ type: "png" });
}

/**
 * Films one page in a fresh page of the pool: guard, session, theme, settle, optional full height, PNG.
 * `armed`: the page was armed ahead (armPage, default settling limits); else it is armed here with `t`'s.
 */
export async function filmPage(
  page: Page,
  context: BrowserContext,
  s: CaptureSettings,
  check: UrlGuard,
  t: FilmTimings = DEFAULT_TIMINGS,
  armed?: ArmedPage,
  early?: (c: Capture) => void,
): Promise<Capture> {
  let target: URL;
  try {
    target = new URL(s.url);
  } catch {
    throw new PermanentJobError(`not a URL: ${s.url}`);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    throw new PermanentJobError("only http and https pages can be filmed");
  if (!(await check(target.href)))
    throw new PermanentJobError(`${target.host} does not resolve to a public address; it cannot be filmed`);
  t.trace?.("check");

  const refused: EgressRefusal[] = [];
  const stopWatching = watchRefusals(page.browser(), (r) => refused.push(r));
  try {
    return await filmGuarded(page, {
      context,
      settings: s,
      check,
      timings: t,
      target,
      refused,
      armed,
      early,
    });
  } finally {
    stopWatching();
  }
}

/** A refusal of the egress proxy in words: the URL when it saw one (plain HTTP), else host:port. */
function refusalTarget(r: EgressRefusal): string {
  return r.url ?? `${r.host.includes(":") ? `[${r.host}]` : r.host}:${r.port}`;
}

/** What filming a page under its guard takes besides the page. */
type GuardedFilm = {
  context: BrowserContext;
  settings: CaptureSettings;
  check: UrlGuard;
  timings: FilmTimings;
  /** The checked URL to film. */
  target: URL;
  /** The egress proxy's refusals while this film runs (filled as they come). */
  refused: EgressRefusal[];
  /** The page as the pool armed it ahead, if it did. */
  armed?: ArmedPage;
  /** Told of an early shot before its quiet window has passed (FilmLimits.early). */
  early?: (c: Capture) => void;
};

/** The error of a film that reached an address that is not public. */
function notPublic(what: string): PermanentJobError {
  return new PermanentJobError(
    `the page or one of its redirects leads to an address that is not public (${what})`,
  );
}

/**
 * Navigates to the target and says why it failed in the words a user reads: not public (the guard or
 * the egress proxy refused a hop), not reachable (final), or did not load (may pass: retried).
 */
async function navigate(
  page: Page,
  opts: { target: URL; timeout: number; guardLog: GuardLog; refused: EgressRefusal[] },
): Promise<Awaited<ReturnType<Page["goto"]>>> {
  const { refused } = opts;
  let response: Awaited<ReturnType<Page["goto"]>>;
  try {
    response = await page.goto(opts.target.href, { waitUntil: "load", timeout: opts.timeout });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (msg.includes("ERR_BLOCKED_BY_CLIENT")) throw notPublic(opts.guardLog.blocked.at(-1) ?? "?");
    // An https page (or redirect hop) whose CONNECT the egress proxy refused.
    if (msg.includes("ERR_TUNNEL_CONNECTION_FAILED") && refused.length > 0)
      throw notPublic(refusalTarget(refused.at(-1)!));
    if (/ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED|ERR_ADDRESS_UNREACHABLE|ERR_INVALID_URL/.test(msg))
      throw new PermanentJobError(`the page could not be reached: ${msg.split("\n")[0]}`);
    throw new FilmError(`the page did not load: ${msg.split("\n")[0]}`);
  }
  // A plain-HTTP document the egress proxy answered itself: refused (403) or unreachable (502, 504).
  const fromProxy = response?.headers()["x-egress-proxy"];
  if (fromProxy === "refused" && refused.length > 0) throw notPublic(refusalTarget(refused.at(-1)!));
  if (fromProxy === "unreachable") {
    const message = `the page could not be reached (HTTP ${response!.status()})`;
    // A gateway timeout may pass; an unreachable host (502) will not.
    throw response!.status() === 504 ? new FilmError(message) : new PermanentJobError(message);
  }
  return response;
}

/** Hides the elements `selectors` match (a style sheet); returns the selectors that are not valid CSS. */
function hideElements(page: Page, selectors: string[]): Promise<string[]> {
  return page.evaluate((selectors: string[]) => {
    const bad: string[] = [];
    const ok: string[] = [];
    for (const sel of selectors) {
      try {
        document.querySelector(sel);
        ok.push(sel);
      } catch {
        bad.push(sel);
      }
    }
    const style = document.createElement("style");
    style.textContent = ok.map((sel) => `${sel}{display:none !important}`).join("\n");
    (document.head ?? document.documentElement).appendChild(style);
    return bad;
  }, selectors);
}

/**
 * The PNG of the page's top `cssHeight` CSS pixels. Chromium's fast PNG encoding: a third less time
 * and CPU than its default for a capture that is decoded once and kept (a larger file).
 */
async function shoot(page: Page, s: CaptureSettings, cssHeight: number): Promise<Uint8Array> {
  const png = await page.screenshot({
    type: "png",
    clip: { x: 0, y: 0, width: s.viewportWidth, height: cssHeight },
    captureBeyondViewport: s.fullPage,
    optimizeForSpeed: true,
  });
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
}

/** What settling a page before its shot takes. */
type Settle = {
  settings: CaptureSettings;
  settling: Settling;
  consent: CookieBanners | null;
  warnings: string[];
  deadline: number;
  /** When settling began (an early shot that was not kept settled first). */
  since: number;
  mark: (phase: string) => void;
};

/**
 * Settles the page before its shot, then does what the capture settings ask for (waitForSelector, the
 * cookie pop-up's handling, hideSelectors, the full page's scroll and second settling); returns the
 * height to capture in CSS pixels.
 */
async function settleForShot(page: Page, o: Settle): Promise<number> {
  const { settings: s, settling, consent, warnings, deadline, mark } = o;
  const settled = await settling.settle({ bottom: s.viewportHeight, deadline, since: o.since });
  if (settled.busy) warnings.push(settleWarning(settled.ms, settled.busy));
  mark("settle");
  if (s.waitForSelector) {
    const sel = s.waitForSelector;
    const limit = Math.max(0, Math.min(CAPTURE_LIMITS.waitForSelectorMs, deadline - Date.now()));
    const seen = await page
      .waitForSelector(sel, { visible: true, timeout: limit })
      .then(() => "ok" as const)
      .catch((err: unknown) => (String(err).includes("is not a valid selector") ? "invalid" : "timeout"));
    if (seen === "ok") await settling.settle({ bottom: s.viewportHeight, deadline });
    else if (seen === "invalid")
      warnings.push(`waitForSelector "${sel}" is not a valid CSS selector; it was ignored`);
    else
      warnings.push(
        `waitForSelector "${sel}" matched no visible element within ${Math.round(limit / 1000)} s; the page was filmed without it`,
      );
  }
  const banner = await consent?.settled(3000);
  if (banner) warnings.push(`a cookie pop-up (${banner}) could not be dismissed`);
  mark("cookie pop-up");
  if (s.hideSelectors && s.hideSelectors.length > 0) {
    const invalid = await hideElements(page, s.hideSelectors);
    for (const sel of invalid)
      warnings.push(`hideSelectors "${sel}" is not a valid CSS selector; it was ignored`);
  }

  const dsf = s.deviceScaleFactor;
  // a clip films a bounded stretch of the page (maxHeight); a still the whole page up to the caps
  const cap = Math.min(MAX_PAGE_HEIGHT, Math.floor(16384 / dsf), s.maxHeight ?? Number.POSITIVE_INFINITY);
  let cssHeight = s.viewportHeight;
  if (s.fullPage) {
    await scrollThrough(page, cap);
    // what scrolling brought in (lazy images, sections) settles too, over the whole captured height
    const again = await settling.settle({ bottom: cap, deadline });
    if (again.busy && !settled.busy) warnings.push(settleWarning(again.ms, again.busy));
    const full = await page.evaluate(() =>
      Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
    );
    cssHeight = Math.max(s.viewportHeight, full);
    if (cssHeight > cap) {
      if (!s.maxHeight)
        warnings.push(`the page is ${cssHeight} px tall; the full-page capture was cut at ${cap} px`);
      cssHeight = cap;
    }
  }
  return cssHeight;
}

async function filmGuarded(page: Page, film: GuardedFilm): Promise<Capture> {
  const { context, settings: s, check, timings: t, target, refused, armed: prearmed } = film;
  const size = (cssHeight: number) => ({
    width: Math.round(s.viewportWidth * s.deviceScaleFactor),
    height: Math.round(cssHeight * s.deviceScaleFactor),
  });
  const warnings: string[] = [];
  const guardLog: GuardLog = { blocked: [] };
  const deadline = Date.now() + t.total;
  const mark = (phase: string) => t.trace?.(phase);
  const traced = <T>(phase: string, p: Promise<T>): Promise<T> =>
    t.trace
      ? p.then((v) => {
          mark(phase);
          return v;
        })
      : p;
  const viewport = {
    width: s.viewportWidth,
    height: s.viewportHeight,
    deviceScaleFactor: s.deviceScaleFactor,
  };
  const cookieBanners = s.hideCookieBanners !== false;
  // A page the pool armed ahead (guard, probe, autoconsent, the usual viewport and theme) needs only
  // what differs; otherwise it is armed now. Independent set-up commands are sent together (each is a
  // browser round trip); all before navigation.
  const arming = prearmed
    ? Promise.resolve(prearmed)
    : armPage(page, { settle: t.settle, cookieBanners, theme: s.theme, viewport });
  const [armed] = await Promise.all([
    traced("set-up: arm", arming),
    traced(
      "set-up: viewport and theme",
      arming.then(async (a) => {
        await Promise.all([
          sameViewport(page.viewport(), viewport) ? null : page.setViewport(viewport),
          a.theme === s.theme
            ? null
            : page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: s.theme }]),
          !cookieBanners && a.consent ? a.consent.disable() : null,
        ]);
      }),
    ),
    traced("set-up: session", applySession(page, context, s)),
  ]);
  armed.guard.use({
    check,
    log: guardLog,
    refuse: s.blockAds
      ? (req) =>
          !(req.isNavigationRequest() && req.frame() === page.mainFrame()) &&
          isAdRequest(req.url(), req.frame()?.url() || target.href, req.resourceType())
      : undefined,
  });
  const settling = armed.settling;
  const consent = cookieBanners ? armed.consent : null;
  mark("set-up");

  const response = await navigate(page, { target, timeout: t.navigation, guardLog, refused });
  mark("navigate");
  if (response && response.status() >= 400) warnings.push(`the page answered HTTP ${response.status()}`);
  // A page that needs nothing but settling is shot as soon as only its quiet window is left, and the
  // shot is kept when the window then passes with no change after it (early_shot.ts); otherwise it is
  // settled first, as it always was.
  const settleFrom = Date.now();
  const early = canShootEarly(s)
    ? await shootEarly({
        settling,
        consent,
        bottom: s.viewportHeight,
        deadline,
        shoot: () => shoot(page, s, s.viewportHeight),
        shot: (png) => film.early?.({ png, ...size(s.viewportHeight), finalUrl: page.url(), warnings: [] }),
        fonts: () => missingFontWarnings(page),
      })
    : null;
  if (early) mark("early shot");
  const cssHeight = early
    ? s.viewportHeight
    : await settleForShot(page, {
        settings: s,
        settling,
        consent,
        warnings,
        deadline,
        since: settleFrom,
        mark,
      });
  mark("options");
  const finalUrl = page.url();
  const login = await detectLoginRedirect(page, target.href, finalUrl);
  if (login) warnings.push(login);
  if (guardLog.blocked.length > 0) {
    const shown = [...new Set(guardLog.blocked)].slice(0, 3).join(", ");
    warnings.push(`blocked ${guardLog.blocked.length} request(s) to non-public addresses: ${shown}`);
  }
  if (refused.length > 0) {
    const shown = [...new Set(refused.map(refusalTarget))].slice(0, 3).join(", ");
    warnings.push(
      `refused ${refused.length} connection(s) to non-public addresses (workers, sockets and other browser traffic): ${shown}`,
    );
  }
  settling.stop();
  mark("checks");
  warnings.push(...(early ? early.fonts : await missingFontWarnings(page)));
  mark("font check");
  const delay = Math.max(0, Math.min(s.delayMs ?? 0, CAPTURE_LIMITS.maxDelayMs, deadline - Date.now()));
  if (delay > 0) await Bun.sleep(delay);
  const png = early ? early.png : await shoot(page, s, cssHeight);
  mark("screenshot");
  return { png, ...size(cssHeight), finalUrl, warnings };
}
