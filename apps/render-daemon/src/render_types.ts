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
  /** CSS px: a full-page film stops here without a warning (a clip's bounded capture, decision 1220). */
  maxHeight?: number;
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
 * (a PermanentJobError), and `signal`, which gives the page up at once (a shutdown). `early`, when given,
 * is told of a shot taken while the page's quiet window still runs (decision 1513): the film resolves
 * with that very capture's `png` when the window passes with no change, so work begun on it holds.
 */
export type FilmLimits = { deadline?: number; signal?: AbortSignal; early?: (c: Capture) => void };

/** Films pages and composes them into device mockups. */
export type RenderPipeline = {
  film(s: CaptureSettings, limits?: FilmLimits): Promise<Capture>;
  compose(c: Capture, look: Look): Promise<Composed>;
  /**
   * Makes a device clip of a filmed page: frames drawn one at a time (plates + warp) and piped into
   * FFmpeg; the MP4 and its poster (the first frame, JPEG).
   */
  clip(c: Capture, look: Look, spec: ClipRenderSpec, signal?: AbortSignal): Promise<ClipOutput>;
  /** Settles when the plates warmed at start are ready (or warming failed). */
  warmed?(): Promise<void>;
  close(): Promise<void>;
};

/** What a clip render needs beyond the look: its motion and output, and the rows the screen shows at once. */
export type ClipRenderSpec = {
  motion: "scroll" | "scroll-tilt" | "orbit";
  durationS: number;
  fps: number;
  width: number;
  height: number;
  /** The viewport's height in capture pixels: what the screen shows at once. */
  windowHeight: number;
};

/** A finished clip: the MP4, the poster JPEG, what to tell the caller, and where the time went (ms). */
export type ClipOutput = {
  video: Uint8Array;
  poster: Uint8Array;
  width: number;
  height: number;
  warnings: string[];
  /**
   * plates: the scene (strip, plates); frames: drawing; encodeWait: waiting on FFmpeg; poster: its JPEG;
   * write: handing frames to the pipe (the synchronous part of each write).
   */
  timings: {
    plates: number;
    frames: number;
    encodeWait: number;
    poster: number;
    write: number;
    total: number;
    encoder: string;
  };
};
