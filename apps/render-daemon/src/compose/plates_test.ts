import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { listStyles, type ScreenshotStyle } from "@site/domain/screenshots";
import { openObjectStore } from "@site/storage";
import IORedis from "ioredis";
import { ssim } from "ssim.js";
import type { ChromiumPipeline } from "../chromium_pipeline.ts";
import { createRenderPipeline } from "../pipeline.ts";
import type { Capture, Look } from "../render_types.ts";
import type { Compositor } from "./compositor.ts";
import { plateKey } from "./compositor.ts";
import { createPlateCache, decodePlate, encodePlate } from "./plate_cache.ts";
import { homography, type Pixels, type PlatePixels, project } from "./warp.ts";

setDefaultTimeout(600_000);

// The bundled demo page: text, gradients, buttons — what minification and edges are hardest on.
const demo = join(import.meta.dir, "../../demo/lumen.html");
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(Bun.file(demo), { headers: { "content-type": "text/html" } }),
});
const dataDir = mkdtempSync(join(tmpdir(), "plates-test-"));
const config = {
  ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "plates-test-secret-key" }),
  renderConcurrency: 1,
};
config.fetchAllowHosts = [`127.0.0.1:${site.port}`];
const log = createLogger("error");
let pipeline: ChromiumPipeline;
let compositor: Compositor;
let capture: Capture;

beforeAll(async () => {
  pipeline = await createRenderPipeline({ config, log, warm: false });
  compositor = pipeline.compositor;
  capture = await pipeline.film({
    url: `http://127.0.0.1:${site.port}/`,
    viewportWidth: 1024,
    viewportHeight: 640,
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

const asImage = (p: Pixels) => ({
  data: new Uint8ClampedArray(p.data.buffer, p.data.byteOffset, p.width * p.height * 4),
  width: p.width,
  height: p.height,
});

function crop(p: Pixels, [x0, y0, x1, y1]: [number, number, number, number]): Pixels {
  const w = x1 - x0;
  const data = new Uint8Array(w * (y1 - y0) * 4);
  for (let y = y0; y < y1; y++)
    data.set(p.data.subarray((y * p.width + x0) * 4, (y * p.width + x1) * 4), (y - y0) * w * 4);
  return { data, width: w, height: y1 - y0 };
}

describe("the warp", () => {
  test("a homography takes each corner where it was asked to, and the centre of a square to the quad's diagonal crossing", () => {
    const from: [number, number][] = [
      [0, 0],
      [100, 0],
      [100, 100],
      [0, 100],
    ];
    const to: [number, number][] = [
      [10, 20],
      [90, 5],
      [120, 130],
      [-5, 90],
    ];
    const h = homography(from, to);
    for (let i = 0; i < 4; i++) {
      const [x, y] = project(h, ...from[i]);
      expect(x).toBeCloseTo(to[i][0], 6);
      expect(y).toBeCloseTo(to[i][1], 6);
    }
    // projective, not affine: the square's centre goes where the quad's diagonals cross
    const [cx, cy] = project(h, 50, 50);
    const t =
      ((-5 - 10) * (90 - 5) - (90 - 20) * (-5 - 90)) / ((120 - 10) * (90 - 5) - (130 - 20) * (-5 - 90));
    expect(cx).toBeCloseTo(10 + t * 110, 6);
    expect(cy).toBeCloseTo(20 + t * 110, 6);
  });
});

describe("plates", () => {
  const styles = listStyles({ limit: 100 });
  styles.forEach((style: ScreenshotStyle, i) => {
    const theme = i % 2 === 0 ? "light" : "dark";
    test(`${style.id} (${theme}): the fast frame agrees with the full 3D render (SSIM ≥ 0.98, whole and screen)`, async () => {
      const look: Look = { styleId: style.id, theme, host: "lumen.example" };
      const fast = await compositor.composePixels(capture, look);
      const reference = await compositor.reference(capture, look);
      expect([fast.pixels.width, fast.pixels.height]).toEqual([reference.width, reference.height]);
      const whole = ssim(asImage(fast.pixels), asImage(reference)).mssim;
      const [x0, y0, x1, y1] = fast.plate.bbox;
      // the screen must be a real part of the frame, or the screen's score would prove nothing
      expect((x1 - x0) * (y1 - y0)).toBeGreaterThan(fast.pixels.width * fast.pixels.height * 0.04);
      const screen = ssim(
        asImage(crop(fast.pixels, fast.plate.bbox)),
        asImage(crop(reference, fast.plate.bbox)),
      ).mssim;
      expect(whole).toBeGreaterThanOrEqual(0.98);
      expect(screen).toBeGreaterThanOrEqual(0.98);
      // default framing: the device fills most of the frame, so its screen spans close to half of it
      const W = fast.pixels.width;
      const H = fast.pixels.height;
      expect(Math.max((x1 - x0) / W, (y1 - y0) / H)).toBeGreaterThan(0.45);
    });
  });

  test("a look's plate is drawn once: the next frames of that look only warp", async () => {
    const look: Look = { styleId: "laptop-studio", theme: "light", host: "lumen.example", framing: 1.3 };
    const before = compositor.plates.stats.built;
    const first = await pipeline.compose(capture, look);
    const second = await pipeline.compose(capture, { ...look, chrome: "dark" });
    expect(compositor.plates.stats.built).toBe(before + 1);
    expect(first.contentType).toBe("image/jpeg");
    expect([second.width, second.height]).toEqual([1024, 640]);
  });

  test("the plate key follows the style's definition, theme, framing and size, not the page", () => {
    const style = listStyles({ limit: 100 })[0];
    const base = { style, theme: "light" as const, framing: 1, width: 1440, height: 900, aspect: 0.625 };
    const key = plateKey(base);
    expect(plateKey({ ...base })).toBe(key);
    const edited = { ...style, look: { ...style.look, shadow: { ...style.look.shadow, opacity: 0.5 } } };
    expect(plateKey({ ...base, style: edited })).not.toBe(key);
    expect(plateKey({ ...base, theme: "dark" })).not.toBe(key);
    expect(plateKey({ ...base, framing: 1.2 })).not.toBe(key);
    expect(plateKey({ ...base, width: 2880, height: 1800 })).not.toBe(key);
  });

  test("a stored plate reads back the same pixels", async () => {
    const { draw } = await compositor.plateJob(capture, { styleId: "phone-hero", theme: "light", host: "x" });
    const plate = await draw();
    const back = await decodePlate(await encodePlate(plate));
    expect(back.corners).toEqual(plate.corners);
    expect(back.bbox).toEqual(plate.bbox);
    expect(Buffer.compare(back.base, plate.base)).toBe(0);
    expect(Buffer.compare(back.mask, plate.mask)).toBe(0);
    // the phone's island hides part of the screen: the coverage says so
    expect(plate.mask.some((a) => a === 255)).toBe(true);
  });

  test("two daemons on one Redis and one object store build a plate once and share it", async () => {
    const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
    const store = openObjectStore(config);
    const prefix = `plates-test-${crypto.randomUUID()}:`;
    const redisA = new IORedis(redisUrl);
    const redisB = new IORedis(redisUrl);
    try {
      const a = createPlateCache({ store, redis: redisA, prefix, log, pollMs: 50 });
      const b = createPlateCache({ store, redis: redisB, prefix, log, pollMs: 50 });
      const { key, draw } = await compositor.plateJob(capture, {
        styleId: "tablet-tilt",
        theme: "dark",
        host: "x",
        framing: 0.9,
      });
      let draws = 0;
      const counted = async (): Promise<PlatePixels> => {
        draws++;
        return draw();
      };
      const [pa, pb] = await Promise.all([a.get(key, counted), b.get(key, counted)]);
      expect(draws).toBe(1);
      expect(a.stats.built + b.stats.built).toBe(1);
      expect(a.stats.waited + b.stats.waited).toBe(1);
      expect(Buffer.compare(pa.base, pb.base)).toBe(0);
      expect(pa.corners).toEqual(pb.corners);
      // a third daemon started later reads it from the store, drawing nothing
      const c = createPlateCache({ store, redis: redisA, prefix, log });
      await c.get(key, counted);
      expect(draws).toBe(1);
      expect(c.stats.storeHits).toBe(1);
      // and the lock is gone once the build is done
      expect(await redisA.exists(`${prefix}plate-lock:${key}`)).toBe(0);
    } finally {
      redisA.disconnect();
      redisB.disconnect();
      await store.close();
    }
  });

  test("warming yields to renders in flight: it draws nothing while one runs, then goes on (1505)", async () => {
    let busy = true;
    let asked = 0;
    const look = { styleId: "tablet-tilt", theme: "light", captureWidth: 1280, captureHeight: 800 } as const;
    const built = compositor.plates.stats.built;
    const warming = compositor.warm([look], {
      busy: () => {
        asked++;
        return busy;
      },
    });
    await Bun.sleep(1000);
    expect(asked).toBeGreaterThan(1);
    expect(compositor.plates.stats.built).toBe(built);
    busy = false;
    await warming;
    expect(compositor.plates.stats.built).toBe(built + 1);
  });

  test("a host started beside a warm one films and frames its first render with no plate built, and says so", async () => {
    const store = openObjectStore(config);
    const look: Look = { styleId: "tablet-tilt", theme: "dark", host: "x", framing: 1.1 };
    // The warm host: the look's plate drawn once and kept in the shared store.
    const { key, draw } = await compositor.plateJob(capture, look);
    await createPlateCache({ store, log }).get(key, draw);
    const lines: Record<string, unknown>[] = [];
    const newLog = createLogger("info", {}, { sink: (l) => lines.push(JSON.parse(l)) });
    const second = await createRenderPipeline({ config, log: newLog, store, warm: false });
    try {
      const shot = await second.film({
        url: `http://127.0.0.1:${site.port}/`,
        viewportWidth: 1024,
        viewportHeight: 640,
        deviceScaleFactor: 1,
        fullPage: false,
        theme: "dark",
      });
      const frame = await second.compose(shot, look);
      expect(frame.width).toBeGreaterThan(0);
      const stats = (second.compositor as Compositor).plates.stats;
      expect(stats.built).toBe(0);
      expect(stats.storeHits).toBe(1);
      const said = lines.find((l) => String(l.msg).startsWith("first frame composed"));
      expect(said?.msg).toBe("first frame composed: no plate built on this host (plates from the store)");
      expect(said).toMatchObject({ built: 0, storeHits: 1 });
    } finally {
      await second.close();
      await store.close();
    }
  });
});
