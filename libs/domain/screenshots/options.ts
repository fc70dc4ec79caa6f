import type { ScreenshotRequestBody } from "./models.ts";
import { parsePublicPageUrl } from "./source_url.ts";

/** The price of one screenshot still, in AI credits. */
export const SCREENSHOT_CREDITS = 10;

/** What filming needs: persisted on the screenshot project. */
export type CaptureOptions = {
  viewportWidth: number;
  viewportHeight: number;
  deviceScaleFactor: number;
  fullPage: boolean;
} & CaptureExtras;

/** The capture options beyond the viewport (decision 1202); stored together in one jsonb. */
export type CaptureExtras = {
  /** CSS selectors hidden (`display: none !important`) before filming. */
  hideSelectors: string[];
  /** Film once this selector matches a visible element (or after WAIT_FOR_SELECTOR_MS, with a warning). */
  waitForSelector: string | null;
  /** Extra wait after the page settled, at most MAX_DELAY_MS. */
  delayMs: number;
  /** Block requests to advertising hosts (Ghostery's tracker database). */
  blockAds: boolean;
  /** Dismiss or hide cookie consent pop-ups (DuckDuckGo's autoconsent rules: opt out). */
  hideCookieBanners: boolean;
};

/** The bounds of the capture extras. */
export const CAPTURE_LIMITS = {
  maxDelayMs: 10_000,
  maxHideSelectors: 20,
  maxSelectorLength: 200,
  waitForSelectorMs: 10_000,
} as const;

/** The extras of a project nobody configured. */
export const DEFAULT_CAPTURE_EXTRAS: CaptureExtras = {
  hideSelectors: [],
  waitForSelector: null,
  delayMs: 0,
  blockAds: false,
  hideCookieBanners: true,
};

/** A project's stored extras (any subset, from its jsonb) over the defaults. */
export function captureExtras(stored: unknown): CaptureExtras {
  const o = (stored && typeof stored === "object" ? stored : {}) as Partial<CaptureExtras>;
  return {
    hideSelectors: Array.isArray(o.hideSelectors) ? o.hideSelectors.map(String) : [],
    waitForSelector: typeof o.waitForSelector === "string" ? o.waitForSelector : null,
    delayMs: typeof o.delayMs === "number" ? o.delayMs : 0,
    blockAds: o.blockAds === true,
    hideCookieBanners: o.hideCookieBanners !== false,
  };
}

/** How to frame the capture. */
export type LookOptions = {
  styleId: string | null;
  theme: "light" | "dark" | null;
  framing: number | null;
  chrome: "none" | "light" | "dark" | null;
};

/** What a screenshot POST asks for: the capture settings it names (others keep the project's). */
export type ScreenshotRequest = {
  url: string;
  estimateOnly: boolean;
  recapture: boolean;
  look: LookOptions;
  capture: Partial<CaptureOptions>;
};

/** The capture settings of a project nobody configured. */
export const DEFAULT_CAPTURE: CaptureOptions = {
  viewportWidth: 1440,
  viewportHeight: 900,
  deviceScaleFactor: 1,
  fullPage: false,
  ...DEFAULT_CAPTURE_EXTRAS,
};

/**
 * The request a checked body (its bounds are `ScreenshotRequestBody`'s) asks for, once the page URL
 * passes the public-address rules (400 VALIDATION_ERROR on `url` otherwise).
 */
export function toScreenshotRequest(
  body: ScreenshotRequestBody,
  allowHosts: readonly string[],
  opts: { localNetwork?: boolean } = {},
): ScreenshotRequest {
  const capture: Partial<CaptureOptions> = {};
  if (body.viewportWidth !== undefined) capture.viewportWidth = body.viewportWidth;
  if (body.viewportHeight !== undefined) capture.viewportHeight = body.viewportHeight;
  if (body.deviceScaleFactor !== undefined) capture.deviceScaleFactor = body.deviceScaleFactor;
  if (body.fullPage !== undefined) capture.fullPage = body.fullPage;
  if (body.hideSelectors !== undefined) capture.hideSelectors = body.hideSelectors.map((s) => s.trim());
  if (body.waitForSelector !== undefined) capture.waitForSelector = body.waitForSelector.trim() || null;
  if (body.delayMs !== undefined) capture.delayMs = body.delayMs;
  if (body.blockAds !== undefined) capture.blockAds = body.blockAds;
  if (body.hideCookieBanners !== undefined) capture.hideCookieBanners = body.hideCookieBanners;
  return {
    url: parsePublicPageUrl(body.url, allowHosts, opts),
    estimateOnly: body.estimateOnly ?? false,
    recapture: body.recapture ?? false,
    look: {
      styleId: body.styleId ?? null,
      theme: body.theme ?? null,
      framing: body.framing ?? null,
      chrome: body.chrome ?? null,
    },
    capture,
  };
}
