import { describe, expect, test } from "bun:test";
import { drawMapped, screenMap } from "./clip_map.ts";
import { type Pixels, type PlatePixels, warpWindow } from "./warp.ts";

// A plate with a device seen at an angle: perspective screen quad, soft (antialiased) mask edges, a base
// with colour everywhere, so that a wrong base, mask or mapping shows in the pixels.
const W = 360;
const H = 450;
function plate(): PlatePixels {
  const corners: [number, number][] = [
    [70.3, 52.7],
    [300.6, 70.1],
    [292.2, 400.4],
    [61.8, 380.9],
  ];
  const base = new Uint8Array(W * H * 4);
  const mask = new Uint8Array(W * H);
  let x0 = W;
  let y0 = H;
  let x1 = 0;
  let y1 = 0;
  // inside the quad by its four edges (convex, clockwise), coverage ramped over a pixel and a half
  const inside = (x: number, y: number) => {
    let d = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 4; i++) {
      const [ax, ay] = corners[i];
      const [bx, by] = corners[(i + 1) % 4];
      const len = Math.hypot(bx - ax, by - ay);
      d = Math.min(d, ((bx - ax) * (y - ay) - (by - ay) * (x - ax)) / len);
    }
    return d;
  };
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const d = inside(x + 0.5, y + 0.5);
      const a = Math.max(0, Math.min(255, Math.round((d / 1.5) * 255)));
      mask[i] = a;
      const dark = 1 - a / 255;
      base[i * 4] = Math.round(((x * 7) % 256) * dark);
      base[i * 4 + 1] = Math.round(((y * 5) % 256) * dark);
      base[i * 4 + 2] = Math.round(((x + y) % 256) * dark);
      base[i * 4 + 3] = 255;
      if (a) {
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x + 1);
        y1 = Math.max(y1, y + 1);
      }
    }
  return { width: W, height: H, base, mask, corners, bbox: [x0, y0, x1, y1] };
}

// A strip three screens tall of fine detail (text-like stripes, hard edges), so sub-pixel errors show.
function strip(width: number, height: number): Pixels {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data[i] = (x * 13 + y * 3) & 255;
      data[i + 1] = (y >> 2) % 2 ? 250 : 10;
      data[i + 2] = ((x ^ y) * 7) & 255;
      data[i + 3] = 255;
    }
  return { data, width, height };
}

function maxDifference(a: Uint8Array, b: Uint8Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe("a still device's screen mapping (decision 1223)", () => {
  const p = plate();
  const s = strip(240, 1100);
  const win = { width: 240, height: 360, header: 24 };
  const map = screenMap(p, s, win);

  test("draws the same pixels as warpWindow for scroll frames, fresh or over a reused buffer", () => {
    expect(map).not.toBeNull();
    if (!map) return;
    expect(map.count).toBeGreaterThan(50_000);
    const reused = new Uint8Array(W * H * 4);
    // 0 and the bottom (travel) are the clamped ends; the others are fractional scrolls
    for (const dy of [0, 0.37, 101.5, 377.91, 740]) {
      const old = new Uint8Array(W * H * 4);
      warpWindow(p, s, { ...win, dy }, old);
      const fresh = new Uint8Array(W * H * 4).fill(77);
      drawMapped(map, dy, fresh);
      expect(maxDifference(fresh, old)).toBeLessThanOrEqual(1);
      // a buffer that held the previous frame of the same plate: only the screen is rewritten
      drawMapped(map, dy, reused, 0, dy !== 0);
      expect(maxDifference(reused, old)).toBeLessThanOrEqual(1);
    }
  });

  test("the frames differ as the page scrolls, and the header rows stay put", () => {
    if (!map) throw new Error("no map");
    const a = new Uint8Array(W * H * 4);
    const b = new Uint8Array(W * H * 4);
    drawMapped(map, 0, a);
    drawMapped(map, 200.5, b);
    expect(maxDifference(a, b)).toBeGreaterThan(100);
    // a pixel well inside the screen's top rows (the header) is the same in both frames
    const headerPixel = (72 * W + 180) * 4;
    expect(map.header[map.index.indexOf(72 * W + 180)]).toBe(1);
    expect([...a.subarray(headerPixel, headerPixel + 4)]).toEqual([
      ...b.subarray(headerPixel, headerPixel + 4),
    ]);
  });

  test("a strip under two pixels wide or tall is left to the warp", () => {
    expect(screenMap(p, strip(1, 500), win)).toBeNull();
    expect(screenMap(p, strip(240, 1), win)).toBeNull();
  });
});
