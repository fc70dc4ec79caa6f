import type { Config, Logger } from "@site/config";

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
};

/** A filmed page: PNG bytes at device pixels, where the browser ended and what to tell the caller. */
export type Capture = {
  png: Uint8Array;
  width: number;
  height: number;
  finalUrl: string;
  warnings: string[];
};

/** How to frame a capture: a style (null = default look), camera distance, browser chrome, theme, host shown. */
export type Look = {
  styleId: string | null;
  framing?: number;
  chrome?: "none" | "light" | "dark";
  theme: "light" | "dark";
  host: string;
};

/** Films pages and composes them into device mockups. */
export type RenderPipeline = {
  film(s: CaptureSettings): Promise<Capture>;
  compose(
    c: Capture,
    look: Look,
  ): Promise<{ bytes: Uint8Array; width: number; height: number; contentType: string }>;
  close(): Promise<void>;
};

/** Starts the browser pool and the warm compositor. */
export async function createRenderPipeline(opts: { config: Config; log: Logger }): Promise<RenderPipeline> {
  const { createPipeline } = await import("./pipeline_impl.ts");
  return createPipeline(opts);
}
