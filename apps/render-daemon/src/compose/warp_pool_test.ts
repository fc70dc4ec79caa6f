import { describe, expect, test } from "bun:test";
import { encodeFrame, frameBuffer, type Pixels, type PlatePixels, warpComposite } from "./warp.ts";
import { createWarpPool } from "./warp_pool.ts";

/** A plate with a gradient backdrop and a tilted screen quad, its coverage soft at one edge. */
function plateOf(seed: number, w = 320, h = 200): PlatePixels {
  const base = new Uint8Array(w * h * 4);
  const mask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      base.set([(x + seed * 40) % 256, (y * 2) % 256, seed * 30, 255], i * 4);
      if (x >= 40 && x < 280 && y >= 20 && y < 180) mask[i] = x < 48 ? 128 : 255;
    }
  return {
    width: w,
    height: h,
    base,
    mask,
    corners: [
      [40 + seed, 20],
      [280, 24],
      [276, 180],
      [44, 176 - seed],
    ],
    bbox: [40, 20, 280, 180],
  };
}

function screenOf(seed: number, w = 200, h = 125): Pixels {
  const data = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++)
    data.set([(i * 7 + seed) % 256, (i >> 3) % 256, (i * 13) % 256, 255], i * 4);
  return { data, width: w, height: h };
}

/** The same frame made on this thread: what the compositor did before decision 1508. */
async function here(plate: PlatePixels, screen: Pixels): Promise<Uint8Array> {
  const frame = frameBuffer(plate.width, plate.height);
  warpComposite(plate, screen, frame.bytes, frame.offset);
  return encodeFrame(frame, 90);
}

describe("warp threads", () => {
  test("a frame from a warp thread is byte for byte the frame made on the main thread", async () => {
    const pool = createWarpPool(2);
    try {
      const plate = plateOf(1);
      const screen = screenOf(3);
      const [a, b] = await Promise.all([
        pool.frame("p1", plate, screen, 90),
        pool.frame("p1", plate, screenOf(5), 90),
      ]);
      expect(Buffer.from(a.bytes).equals(Buffer.from(await here(plate, screen)))).toBe(true);
      expect(Buffer.from(b.bytes).equals(Buffer.from(await here(plate, screenOf(5))))).toBe(true);
      expect(a.bytes[0]).toBe(0xff); // JPEG SOI
      expect(a.bytes[1]).toBe(0xd8);
    } finally {
      pool.close();
    }
  });

  test("plates a thread let go are sent again: more looks than a thread keeps, then the first again", async () => {
    const pool = createWarpPool(1);
    try {
      const screen = screenOf(2);
      for (const seed of [1, 2, 3, 4, 5, 6, 1, 2]) {
        const plate = plateOf(seed);
        const got = await pool.frame(`p${seed}`, plate, screen, 90);
        expect(Buffer.from(got.bytes).equals(Buffer.from(await here(plate, screen)))).toBe(true);
      }
    } finally {
      pool.close();
    }
  });

  test("a frame the thread cannot make fails alone; the pool goes on, and a closed pool refuses", async () => {
    const pool = createWarpPool(1);
    const plate = plateOf(1);
    const bad: PlatePixels = {
      ...plate,
      corners: [plate.corners[0], plate.corners[0], plate.corners[0], plate.corners[0]],
    };
    await expect(pool.frame("bad", bad, screenOf(1), 90)).rejects.toThrow(/degenerate screen quad/);
    const ok = await pool.frame("good", plate, screenOf(1), 90);
    expect(Buffer.from(ok.bytes).equals(Buffer.from(await here(plate, screenOf(1))))).toBe(true);
    pool.close();
    await expect(pool.frame("good", plate, screenOf(1), 90)).rejects.toThrow(/closed/);
  });
});
