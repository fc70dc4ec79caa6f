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
};

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
