import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { listStyles, type ScreenshotStyle } from "@site/domain/screenshots";
import { PermanentJobError } from "@site/queue";
import { decodeImage } from "../frame/encode.ts";
import { createRenderPipeline } from "../pipeline.ts";
import type { Capture, Look, RenderPipeline } from "../render_types.ts";

setDefaultTimeout(120_000);

// The filmed page is one flat magenta field, so its pixels are easy to find in the frame.
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () =>
    new Response('<!doctype html><html style="background:#ff00ff"><body></body></html>', {
      headers: { "content-type": "text/html" },
    }),
});
const dataDir = mkdtempSync(join(tmpdir(), "compose-test-"));
let pipeline: RenderPipeline;
let capture: Capture;
const logged: string[] = [];
let compositorReadyAtStart = true;

const styleFor = (device: string) =>
  listStyles({ limit: 100 }).find((s) => s.look.device === device) as ScreenshotStyle;

/** Counts pixels near a colour and measures how varied the frame is. */
async function inspect(bytes: Uint8Array, rgb: [number, number, number], tolerance = 40) {
  const img = await decodeImage(bytes);
  let near = 0;
  let min = 255;
  let max = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
    if (Math.abs(r - rgb[0]) + Math.abs(g - rgb[1]) + Math.abs(b - rgb[2]) < tolerance) near++;
    const l = (r + g + b) / 3;
    min = Math.min(min, l);
    max = Math.max(max, l);
  }
  return {
    near,
    share: near / (img.width * img.height),
    range: max - min,
    width: img.width,
    height: img.height,
  };
}

const MAGENTA: [number, number, number] = [255, 0, 255];
const TRAFFIC_RED: [number, number, number] = [255, 95, 87];

beforeAll(async () => {
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "compose-test-secret-key" }),
    renderConcurrency: 1,
  };
  config.fetchAllowHosts = [`127.0.0.1:${site.port}`];
  pipeline = await createRenderPipeline({
    config,
    log: createLogger("info", {}, { sink: (line) => logged.push(JSON.parse(line).msg) }),
    warm: false,
  });
  compositorReadyAtStart = logged.includes("compositor ready");
  capture = await pipeline.film({
    url: `http://127.0.0.1:${site.port}/`,
    viewportWidth: 1280,
    viewportHeight: 800,
    deviceScaleFactor: 1,
    fullPage: false,
    theme: "light",
  });
});

afterAll(async () => {
  await pipeline?.close();
  site.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("start", () => {
  test("the pipeline films before the compositor is warm: a restarted daemon takes jobs at once", async () => {
    // Found by the chaos run: the compositor's WebGL page took 26 s to warm on a busy host, and a daemon
    // restarted after a crash took no job until then (issue 18.4 wants renders running within 10 s).
    expect(compositorReadyAtStart).toBe(false);
    // beforeAll filmed already; the first frame waited for the warm-up and then framed.
    expect(capture.png.byteLength).toBeGreaterThan(0);
    const out = await pipeline.compose(capture, { styleId: null, theme: "light", host: "127.0.0.1" });
    expect(out.width).toBeGreaterThan(0);
    expect(logged).toContain("compositor ready");
  });
});

describe("compose", () => {
  for (const device of ["laptop", "monitor", "tablet", "phone", "window"]) {
    test(`frames the capture on a ${device}: 16:10 JPEG, a real scene, the page visible`, async () => {
      const look: Look = {
        styleId: styleFor(device).id,
        theme: "light",
        chrome: "none",
        host: "example.com",
      };
      const out = await pipeline.compose(capture, look);
      expect(out.contentType).toBe("image/jpeg");
      expect([out.width, out.height]).toEqual([1280, 800]);
      const px = await inspect(out.bytes, MAGENTA);
      expect([px.width, px.height]).toEqual([1280, 800]);
      expect(px.range).toBeGreaterThan(100);
      expect(px.share).toBeGreaterThan(device === "phone" ? 0.01 : 0.08);
      expect(px.share).toBeLessThan(0.9);
    });
  }

  test("light and dark chrome draw a title bar with traffic lights; none draws none", async () => {
    const look: Look = { styleId: "browser-flat", theme: "light", host: "shop.example.com" };
    const none = await inspect(
      (await pipeline.compose(capture, { ...look, chrome: "none" })).bytes,
      TRAFFIC_RED,
      30,
    );
    const light = await pipeline.compose(capture, { ...look, chrome: "light" });
    const dark = await pipeline.compose(capture, { ...look, chrome: "dark" });
    expect(none.near).toBe(0);
    expect((await inspect(light.bytes, TRAFFIC_RED, 30)).near).toBeGreaterThan(10);
    expect((await inspect(dark.bytes, TRAFFIC_RED, 30)).near).toBeGreaterThan(10);
    expect((await inspect(light.bytes, [246, 246, 248], 12)).near).toBeGreaterThan(
      (await inspect(dark.bytes, [246, 246, 248], 12)).near,
    );
  });

  test("framing below 1 moves the camera closer: the page fills more of the frame", async () => {
    const look: Look = { styleId: "laptop-studio", theme: "light", chrome: "none", host: "example.com" };
    const tight = await inspect((await pipeline.compose(capture, { ...look, framing: 0.6 })).bytes, MAGENTA);
    const wide = await inspect((await pipeline.compose(capture, { ...look, framing: 2 })).bytes, MAGENTA);
    expect(tight.near).toBeGreaterThan(wide.near * 2);
  });

  test("the theme picks the style's light or dark backdrop", async () => {
    const look: Look = { styleId: "browser-flat", chrome: "none", theme: "light", host: "example.com" };
    const corner = async (theme: "light" | "dark") => {
      const img = await decodeImage((await pipeline.compose(capture, { ...look, theme })).bytes);
      return (img.data[0] + img.data[1] + img.data[2]) / 3;
    };
    expect(await corner("light")).toBeGreaterThan(200);
    expect(await corner("dark")).toBeLessThan(60);
  });

  test("an unknown style is refused for good, never framed in the default look", async () => {
    const composed = pipeline.compose(capture, {
      styleId: "no-such-style",
      theme: "light",
      host: "example.com",
    });
    await expect(composed).rejects.toBeInstanceOf(PermanentJobError);
    await expect(composed).rejects.toThrow('unknown screenshot style "no-such-style"');
  });
});
