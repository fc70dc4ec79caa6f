// The render pipeline's shared types, in a file of their own so the pipeline and its parts
// (film, compose) import them without importing each other.
import type { CaptureExtras } from "@site/domain/screenshots";

/** What to film: the page, its viewport and the stored login session to start with. */
export type CaptureSettings = {
  url: string;
  viewportWidth: number;
  viewportHeight: number;
  deviceScaleFactor: number;
  fullPage: boolean;
  theme: "light" | "dark";
  cookies?: unknown[];
  localStorage?: Record<string, Record<string, string>>;
} & Partial<CaptureExtras>;

/** A filmed page: PNG bytes at device pixels, where the browser ended and what to tell the caller. */
export type Capture = {
  png: Uint8Array;
  width: number;
  height: number;
  finalUrl: string;
  warnings: string[];
};

/** A composed frame: the encoded image and its size. */
export type Composed = { bytes: Uint8Array; width: number; height: number; contentType: string };

/** How to frame a capture: a style (null = default look), camera distance, browser chrome, theme, host shown. */
export type Look = {
  styleId: string | null;
  framing?: number;
  chrome?: "none" | "light" | "dark";
  theme: "light" | "dark";
  host: string;
};

/**
 * Limits of one film: `deadline` (epoch ms) past which the page is killed and the film fails for good
 * (a PermanentJobError), and `signal`, which gives the page up at once (a shutdown).
 */
export type FilmLimits = { deadline?: number; signal?: AbortSignal };

/** Films pages and composes them into device mockups. */
export type RenderPipeline = {
  film(s: CaptureSettings, limits?: FilmLimits): Promise<Capture>;
  compose(c: Capture, look: Look): Promise<Composed>;
  /**
   * The compositor itself (a `Compositor` of compose/compositor.ts: plates, the fast path's pixels and
   * the 3D reference), for tests and benches. Left untyped here: compositor.ts imports this file.
   */
  compositor?: unknown;
  /** Settles when the plates warmed at start are ready (or warming failed). */
  warmed?(): Promise<void>;
  close(): Promise<void>;
};
