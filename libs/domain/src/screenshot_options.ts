import { validationError } from "./errors.ts";
import { parsePublicPageUrl } from "./screenshot_url.ts";

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

/** A checked screenshot POST body: the capture settings it names (others keep the project's). */
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

function optBool(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw validationError(field, "must be a boolean");
  return v;
}

function optNumber(body: Record<string, unknown>, field: string, min: number, max: number, int: boolean) {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw validationError(field, "must be a number");
  if (int && !Number.isInteger(v)) throw validationError(field, "must be an integer");
  if (v < min || v > max) throw validationError(field, `must be between ${min} and ${max}`);
  return v;
}

function optEnum<T extends string>(body: Record<string, unknown>, field: string, values: readonly T[]) {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || !values.includes(v as T))
    throw validationError(field, `must be one of ${values.join(", ")}`);
  return v as T;
}

/** Checks every field and range of the screenshot POST body; 400 VALIDATION_ERROR names the field. */
export function parseScreenshotRequest(body: unknown, allowHosts: readonly string[]): ScreenshotRequest {
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw validationError("body", "must be a JSON object");
  const b = body as Record<string, unknown>;
  const url = parsePublicPageUrl(b.url, allowHosts);
  const styleId = b.styleId;
  if (
    styleId !== undefined &&
    styleId !== null &&
    (typeof styleId !== "string" || styleId.length === 0 || styleId.length > 100)
  )
    throw validationError("styleId", "must be a style id from the styles listing");
  const capture: Partial<CaptureOptions> = {};
  const vw = optNumber(b, "viewportWidth", 320, 3840, true);
  const vh = optNumber(b, "viewportHeight", 320, 3840, true);
  const dsf = optNumber(b, "deviceScaleFactor", 1, 3, false);
  const fullPage = optBool(b, "fullPage");
  if (vw !== undefined) capture.viewportWidth = vw;
  if (vh !== undefined) capture.viewportHeight = vh;
  if (dsf !== undefined) capture.deviceScaleFactor = dsf;
  if (fullPage !== undefined) capture.fullPage = fullPage;
  return {
    url,
    estimateOnly: optBool(b, "estimateOnly") ?? false,
    recapture: optBool(b, "recapture") ?? false,
    look: {
      styleId: typeof styleId === "string" ? styleId : null,
      theme: optEnum(b, "theme", ["light", "dark"] as const) ?? null,
      framing: optNumber(b, "framing", 0.4, 3, false) ?? null,
      chrome: optEnum(b, "chrome", ["none", "light", "dark"] as const) ?? null,
    },
    capture,
  };
}
