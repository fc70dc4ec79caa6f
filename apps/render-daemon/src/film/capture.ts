import type { BrowserContext, CookieData, Page } from "puppeteer-core";
import type { Capture, CaptureSettings } from "../pipeline.ts";
import { guardPage, type UrlGuard } from "./address_guard.ts";
import { detectLoginRedirect } from "./login_detection.ts";

/** A film that cannot succeed; `permanent` tells the queue not to retry (blocked address, bad URL). */
export class FilmError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** Time limits for one film, in milliseconds. */
export type FilmTimings = { navigation: number; networkQuiet: number; fonts: number; total: number };

/** The defaults: 30 s to load, 4 s for the network to go quiet, 3 s for fonts, 60 s in all. */
export const DEFAULT_TIMINGS: FilmTimings = {
  navigation: 30_000,
  networkQuiet: 4_000,
  fonts: 3_000,
  total: 60_000,
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

async function settle(page: Page, t: FilmTimings): Promise<void> {
  await page.waitForNetworkIdle({ idleTime: 400, timeout: t.networkQuiet, concurrency: 0 }).catch(() => {});
  await page
    .evaluate(
      (ms: number) =>
        Promise.race([document.fonts.ready.then(() => true), new Promise((r) => setTimeout(r, ms))]),
      t.fonts,
    )
    .catch(() => {});
}

/** Scrolls down the page a screen at a time so lazy images and sections load, then back to the top. */
async function scrollThrough(page: Page, maxHeight: number, t: FilmTimings): Promise<void> {
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
  await page
    .waitForNetworkIdle({ idleTime: 300, timeout: t.networkQuiet / 2, concurrency: 0 })
    .catch(() => {});
}

/** Films one page in a fresh page of the pool: guard, session, theme, settle, optional full height, PNG. */
export async function filmPage(
  page: Page,
  context: BrowserContext,
  s: CaptureSettings,
  check: UrlGuard,
  t: FilmTimings = DEFAULT_TIMINGS,
): Promise<Capture> {
  let target: URL;
  try {
    target = new URL(s.url);
  } catch {
    throw new FilmError(`not a URL: ${s.url}`, true);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    throw new FilmError("only http and https pages can be filmed", true);
  if (!(await check(target.href)))
    throw new FilmError(`${target.host} does not resolve to a public address; it cannot be filmed`, true);

  const warnings: string[] = [];
  const guardLog: { blocked: string[]; rebound?: string[] } = { blocked: [] };
  const deadline = Date.now() + t.total;
  await guardPage(page, check, guardLog);
  await page.setViewport({
    width: s.viewportWidth,
    height: s.viewportHeight,
    deviceScaleFactor: s.deviceScaleFactor,
  });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: s.theme }]);
  await applySession(page, context, s);

  let response: Awaited<ReturnType<Page["goto"]>>;
  try {
    response = await page.goto(target.href, { waitUntil: "load", timeout: t.navigation });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (msg.includes("ERR_BLOCKED_BY_CLIENT"))
      throw new FilmError(
        `the page redirected to an address that is not public (${guardLog.blocked.at(-1) ?? "?"})`,
        true,
      );
    if (/ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED|ERR_ADDRESS_UNREACHABLE|ERR_INVALID_URL/.test(msg))
      throw new FilmError(`the page could not be reached: ${msg.split("\n")[0]}`, true);
    throw new FilmError(`the page did not load: ${msg.split("\n")[0]}`, false);
  }
  if (response && response.status() >= 400) warnings.push(`the page answered HTTP ${response.status()}`);
  await settle(page, t);

  const dsf = s.deviceScaleFactor;
  const cap = Math.min(MAX_PAGE_HEIGHT, Math.floor(16384 / dsf));
  let cssHeight = s.viewportHeight;
  if (s.fullPage) {
    await scrollThrough(page, cap, {
      ...t,
      networkQuiet: Math.max(500, Math.min(t.networkQuiet, deadline - Date.now())),
    });
    const full = await page.evaluate(() =>
      Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
    );
    cssHeight = Math.max(s.viewportHeight, full);
    if (cssHeight > cap) {
      warnings.push(`the page is ${cssHeight} px tall; the full-page capture was cut at ${cap} px`);
      cssHeight = cap;
    }
  }
  if (guardLog.rebound?.length) {
    throw new FilmError(
      `the page was served from a non-public address after its host passed the address check (${guardLog.rebound[0]}); nothing was captured`,
      true,
    );
  }
  const finalUrl = page.url();
  const login = await detectLoginRedirect(page, target.href, finalUrl);
  if (login) warnings.push(login);
  if (guardLog.blocked.length > 0) {
    const shown = [...new Set(guardLog.blocked)].slice(0, 3).join(", ");
    warnings.push(`blocked ${guardLog.blocked.length} request(s) to non-public addresses: ${shown}`);
  }
  const png = await page.screenshot({
    type: "png",
    clip: { x: 0, y: 0, width: s.viewportWidth, height: cssHeight },
    captureBeyondViewport: s.fullPage,
  });
  return {
    png: new Uint8Array(png),
    width: Math.round(s.viewportWidth * dsf),
    height: Math.round(cssHeight * dsf),
    finalUrl,
    warnings,
  };
}
