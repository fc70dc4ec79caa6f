// A still device's screen mapping, computed once per clip (decision 1223): the homography division,
// the clamps and the column of every screen pixel do not change while the plate does not, so a frame is
// only the scroll offset and a bilinear sample per screen pixel, written over the plate's base.
import { type Pixels, type PlatePixels, screenHomography } from "./warp.ts";

/** Where each screen pixel of one plate reads the strip, in the order the old warp visited them. */
export type ScreenMap = {
  /** The plate it was computed for (a blended plate is never mapped: its corners move). */
  plate: PlatePixels;
  /** The strip it reads (its width and height fix the clamps). */
  strip: Pixels;
  /** Screen pixels mapped (mask > 0 inside the bbox). */
  count: number;
  /** Frame pixel index of each. */
  index: Uint32Array;
  /** Byte offset of its left sample column in a strip row (x clamped so the right column exists). */
  col: Int32Array;
  /** Coverage × weight of the left column (coverage folded in: one multiply less per channel). */
  left: Float32Array;
  /** Coverage × weight of the right column. */
  right: Float32Array;
  /** Strip row before the scroll, less half a pixel (the warp's v − 0.5 for header rows). */
  v: Float32Array;
  /** 1 where the row belongs to the fixed header (not scrolled). */
  header: Uint8Array;
};

/**
 * The screen mapping of `plate` for a window of `width`×`height` strip pixels with `header` fixed rows:
 * the same homography, incremental steps and clamps as `warpWindow`, evaluated once. Null where the
 * strip is under two pixels wide or tall (the warp's edge cases; the caller draws with the warp).
 */
export function screenMap(
  plate: PlatePixels,
  strip: Pixels,
  window: { width: number; height: number; header: number },
): ScreenMap | null {
  const sw = strip.width;
  const maxX = sw - 1;
  const maxY = strip.height - 1;
  if (maxX < 1 || maxY < 1) return null;
  const { width: W, mask } = plate;
  const [x0, y0, x1, y1] = plate.bbox;
  let count = 0;
  for (let y = y0; y < y1; y++) for (let m = y * W + x0, e = y * W + x1; m < e; m++) if (mask[m]) count++;
  const index = new Uint32Array(count);
  const col = new Int32Array(count);
  const left = new Float32Array(count);
  const right = new Float32Array(count);
  const vs = new Float32Array(count);
  const hdr = new Uint8Array(count);
  const h = screenHomography(plate.corners, window.width, window.height);
  const maxWinY = window.height - 0.5;
  let j = 0;
  for (let y = y0; y < y1; y++) {
    const Y = y + 0.5;
    let nu = h[0] * (x0 + 0.5) + h[1] * Y + h[2];
    let nv = h[3] * (x0 + 0.5) + h[4] * Y + h[5];
    let dd = h[6] * (x0 + 0.5) + h[7] * Y + h[8];
    let m = y * W + x0;
    for (let x = x0; x < x1; x++, m++, nu += h[0], nv += h[3], dd += h[6]) {
      const a = mask[m];
      if (a === 0) continue;
      let u = nu / dd - 0.5;
      let v = nv / dd;
      if (v > maxWinY) v = maxWinY;
      if (u < 0) u = 0;
      else if (u > maxX) u = maxX;
      let ix = u | 0;
      let fx = u - ix;
      // the last column: its right neighbour has weight 0 in the warp; read it as the left one's right
      if (ix >= maxX) {
        ix = maxX - 1;
        fx = 1;
      }
      index[j] = m;
      col[j] = ix * 4;
      left[j] = (a / 255) * (1 - fx);
      right[j] = (a / 255) * fx;
      hdr[j] = v < window.header ? 1 : 0;
      vs[j] = v - 0.5;
      j++;
    }
  }
  return { plate, strip, count, index, col, left, right, v: vs, header: hdr };
}

/**
 * Draws one frame with `map` into `out` (RGBA at `offset`): every mapped pixel is the plate's base plus
 * the strip sampled `dy` rows further down (header rows unscrolled), as `warpWindow` draws it. The
 * rest of `out` is not touched: `baseReady` says it already holds the plate's base (a reused buffer that
 * last held a frame of this plate); otherwise the base is copied first.
 */
export function drawMapped(map: ScreenMap, dy: number, out: Uint8Array, offset = 0, baseReady = false): void {
  const base = map.plate.base;
  if (!baseReady) out.set(base, offset);
  const src = map.strip.data;
  const row = map.strip.width * 4;
  const maxY = map.strip.height - 1;
  const { count, index, col, left, right, v: vs, header } = map;
  for (let j = 0; j < count; j++) {
    let v = header[j] ? vs[j] : vs[j] + dy;
    if (v < 0) v = 0;
    else if (v > maxY) v = maxY;
    let iy = v | 0;
    let fy = v - iy;
    if (iy >= maxY) {
      iy = maxY - 1;
      fy = 1;
    }
    const p = left[j];
    const q = right[j];
    const gy = 1 - fy;
    const w00 = p * gy;
    const w10 = q * gy;
    const w01 = p * fy;
    const w11 = q * fy;
    const i00 = iy * row + col[j];
    const i01 = i00 + row;
    const b = index[j] * 4;
    const o = offset + b;
    const r = base[b] + src[i00] * w00 + src[i00 + 4] * w10 + src[i01] * w01 + src[i01 + 4] * w11;
    const g = base[b + 1] + src[i00 + 1] * w00 + src[i00 + 5] * w10 + src[i01 + 1] * w01 + src[i01 + 5] * w11;
    const bl =
      base[b + 2] + src[i00 + 2] * w00 + src[i00 + 6] * w10 + src[i01 + 2] * w01 + src[i01 + 6] * w11;
    out[o] = r > 255 ? 255 : (r + 0.5) | 0;
    out[o + 1] = g > 255 ? 255 : (g + 0.5) | 0;
    out[o + 2] = bl > 255 ? 255 : (bl + 0.5) | 0;
  }
}
