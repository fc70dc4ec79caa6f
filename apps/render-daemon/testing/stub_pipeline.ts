// A render pipeline without Chromium (decision 1503): the farm scale bench runs 30 and more daemons on a
// 2-core machine with the real queue, admission, claim and completion code, and this in place of the
// browser and the compositor. A test hook: startRenderDaemon refuses it with NODE_ENV=production.
import { sampleImage } from "@site/domain/testing";
import type { Capture, CaptureSettings, Composed, RenderPipeline } from "../src/render_types.ts";

export type StubPipelineOptions = {
  /** How long a film takes (a sleep: the browser's time, off this process's CPU); default 200 ms. */
  filmMs?: number;
  /** How long composing takes (a sleep); default 20 ms. */
  composeMs?: number;
  /** Bytes of the filmed PNG (kept on the screenshot project); default 64 KiB. */
  captureBytes?: number;
  /** Bytes of the composed frame (the library file); default 64 KiB. */
  frameBytes?: number;
  /** Called at the start of every film with the page URL: how the bench counts runs. */
  onFilm?: (url: string) => void;
};

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** A pipeline whose film sleeps and answers a valid PNG, and whose compose answers another. */
export function createStubPipeline(opts: StubPipelineOptions = {}): RenderPipeline {
  const filmMs = opts.filmMs ?? 200;
  const composeMs = opts.composeMs ?? 20;
  const png = (w: number, h: number, size: number) => sampleImage("png", { width: w, height: h, size });
  return {
    async film(s: CaptureSettings, limits): Promise<Capture> {
      opts.onFilm?.(s.url);
      await sleep(filmMs, limits?.signal);
      const width = Math.round(s.viewportWidth * s.deviceScaleFactor);
      const height = Math.round(s.viewportHeight * s.deviceScaleFactor);
      return {
        png: png(width, height, opts.captureBytes ?? 65536),
        width,
        height,
        finalUrl: s.url,
        warnings: [],
      };
    },
    async compose(c: Capture): Promise<Composed> {
      await sleep(composeMs);
      return {
        bytes: png(c.width, c.height, opts.frameBytes ?? 65536),
        width: c.width,
        height: c.height,
        contentType: "image/png",
      };
    },
    async clip() {
      throw new Error("the stub pipeline makes no clips");
    },
    async close() {},
  };
}
