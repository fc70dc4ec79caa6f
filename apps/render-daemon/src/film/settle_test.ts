import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURE_MAGENTA, serveSettlePages } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import { decodeImage } from "../frame/encode.ts";
import { createRenderPipeline } from "../pipeline.ts";
import type { Capture, CaptureSettings, RenderPipeline } from "../render_types.ts";

setDefaultTimeout(120_000);

const pages = serveSettlePages();
const dataDir = mkdtempSync(join(tmpdir(), "settle-test-"));
let pipeline: RenderPipeline;

beforeAll(async () => {
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "settle-test-secret-key" }),
    renderConcurrency: 1,
  };
  config.fetchAllowHosts = [pages.host];
  pipeline = await createRenderPipeline({ config, log: createLogger("error"), warm: false });
});

afterAll(async () => {
  await pipeline?.close();
  pages.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Early shots the film told of (FilmLimits.early), the last film's. */
let earlyShots: Capture[] = [];

const film = (path: string, extra: Partial<CaptureSettings> = {}) => {
  earlyShots = [];
  return pipeline.film(
    {
      url: pages.url(path),
      viewportWidth: 800,
      viewportHeight: 600,
      deviceScaleFactor: 1,
      fullPage: false,
      theme: "light",
      ...extra,
    },
    { early: (c) => earlyShots.push(c) },
  );
};

/** Pixels within 40 of an RGB colour, in rows [y0, y1) of the capture. */
async function count(c: Capture, rgb: [number, number, number], y0 = 0, y1 = c.height) {
  const img = await decodeImage(c.png);
  let n = 0;
  for (let y = y0; y < Math.min(y1, img.height); y++)
    for (let x = 0; x < img.width; x++) {
      const i = (y * img.width + x) * 4;
      const d =
        Math.abs(img.data[i] - rgb[0]) +
        Math.abs(img.data[i + 1] - rgb[1]) +
        Math.abs(img.data[i + 2] - rgb[2]);
      if (d < 40) n++;
    }
  return n;
}

const notSettled = (c: Capture) => c.warnings.filter((w) => w.includes("had not settled"));

describe("settling", () => {
  test("a static page is filmed complete, with no settling warning", async () => {
    const c = await film("/static");
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
    expect(notSettled(c)).toEqual([]);
  });

  test("a static page is shot while its quiet window runs, and that shot is the one kept", async () => {
    const c = await film("/static");
    expect(earlyShots).toHaveLength(1);
    expect(earlyShots[0]?.png).toBe(c.png);
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
  });

  test("a change 60 ms after load (animation frames: no timer, no request) is filmed", async () => {
    const c = await film("/after-load");
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
    expect(notSettled(c)).toEqual([]);
  });

  test("an entrance animation is waited for: a block fading in over 600 ms is filmed opaque", async () => {
    const c = await film("/fade");
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
    expect(notSettled(c)).toEqual([]);
  });

  test("content fetched 300 ms after load is waited for (a pending short timer, then the request)", async () => {
    const c = await film("/late");
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 290);
    expect(pages.hits.get("/late/data")).toBeGreaterThan(0);
    expect(notSettled(c)).toEqual([]);
  });

  test("a lazy image below the fold is loaded and decoded before a full-page capture", async () => {
    const c = await film("/lazy", { fullPage: true });
    expect(c.height).toBeGreaterThan(3000);
    expect(await count(c, FIXTURE_MAGENTA, 3000)).toBeGreaterThan(400 * 290);
    expect(notSettled(c)).toEqual([]);
  });

  test("web fonts are waited for: a heading in a font that blocks text is drawn", async () => {
    const c = await film("/fonts");
    expect(await count(c, [0, 0, 0], 0, 300)).toBeGreaterThan(2000);
    expect(notSettled(c)).toEqual([]);
  });

  test("a page that never goes quiet is filmed at the cap, complete, with a warning that says why", async () => {
    const c = await film("/clock");
    expect(await count(c, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
    const [warning] = notSettled(c);
    expect(warning).toContain("the page kept changing");
    expect(warning).toContain("it was filmed as it was");
  });
});
