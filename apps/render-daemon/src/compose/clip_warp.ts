// A clip's frame on the CPU: the still's plate + warp (decision 1200), with the screen's window scrolled
// through a tall strip and, for a moving device, the plate taken between two stored angles.
import { homography, type Pixels, type PlatePixels } from "./warp.ts";

/**
 * The plate between `a` and `b` at `t` (0..1): pixels and coverage blended, corners interpolated, into
 * `into` (reused between frames). Neighbouring angles are a few degrees apart, so the blend reads as a
 * little motion blur on the device's edges (decision 1221).
 */
export function blendPlates(a: PlatePixels, b: PlatePixels, t: number, into?: PlatePixels): PlatePixels {
  if (t <= 0.001) return a;
  if (t >= 0.999) return b;
  const n = a.width * a.height;
  const out: PlatePixels = into ?? {
    width: a.width,
    height: a.height,
    base: new Uint8Array(n * 4),
    mask: new Uint8Array(n),
    corners: [],
    bbox: [0, 0, 0, 0],
  };
  const w = Math.round(t * 256);
  const v = 256 - w;
  const ab = a.base;
  const bb = b.base;
  const ob = out.base;
  for (let i = 0; i < ob.length; i++) ob[i] = (ab[i] * v + bb[i] * w + 128) >> 8;
  const am = a.mask;
  const bm = b.mask;
  const om = out.mask;
  for (let i = 0; i < n; i++) om[i] = (am[i] * v + bm[i] * w + 128) >> 8;
  out.corners = a.corners.map(([x, y], i) => [x + (b.corners[i][0] - x) * t, y + (b.corners[i][1] - y) * t]);
  out.bbox = [
    Math.min(a.bbox[0], b.bbox[0]),
    Math.min(a.bbox[1], b.bbox[1]),
    Math.max(a.bbox[2], b.bbox[2]),
    Math.max(a.bbox[3], b.bbox[3]),
  ];
  return out;
}

/**
 * Draws one frame into `out` (RGBA at `offset`): the plate, plus the screen's window through `strip`
 * warped onto the plate's screen quad. Screen rows above `header` show the strip's fixed header; below
 * it, the strip `dy` rows further down (fractional: sampled bilinearly, so a slow scroll never steps).
 */
export function warpClipFrame(
  plate: PlatePixels,
  strip: Pixels,
  window: { width: number; height: number; header: number; dy: number },
  out: Uint8Array,
  offset = 0,
): void {
  const { width: W, base, mask } = plate;
  out.set(base, offset);
  const sw = strip.width;
  const stripH = strip.height;
  const src = strip.data;
  const { header, dy } = window;
  const h = homography(plate.corners, [
    [0, 0],
    [window.width, 0],
    [window.width, window.height],
    [0, window.height],
  ]);
  const [x0, y0, x1, y1] = plate.bbox;
  const maxX = sw - 1;
  const maxY = stripH - 1;
  const maxWinY = window.height - 0.5;
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
      v = (v < header ? v : v + dy) - 0.5;
      if (u < 0) u = 0;
      else if (u > maxX) u = maxX;
      if (v < 0) v = 0;
      else if (v > maxY) v = maxY;
      const ix = u | 0;
      const iy = v | 0;
      const fx = u - ix;
      const fy = v - iy;
      const i00 = (iy * sw + ix) * 4;
      const i10 = ix < maxX ? i00 + 4 : i00;
      const i01 = iy < maxY ? i00 + sw * 4 : i00;
      const i11 = ix < maxX ? i01 + 4 : i01;
      const w00 = (1 - fx) * (1 - fy);
      const w10 = fx * (1 - fy);
      const w01 = (1 - fx) * fy;
      const w11 = fx * fy;
      const k = a / 255;
      const o = offset + m * 4;
      const r = out[o] + k * (src[i00] * w00 + src[i10] * w10 + src[i01] * w01 + src[i11] * w11);
      const g =
        out[o + 1] + k * (src[i00 + 1] * w00 + src[i10 + 1] * w10 + src[i01 + 1] * w01 + src[i11 + 1] * w11);
      const b =
        out[o + 2] + k * (src[i00 + 2] * w00 + src[i10 + 2] * w10 + src[i01 + 2] * w01 + src[i11 + 2] * w11);
      out[o] = r > 255 ? 255 : r + 0.5;
      out[o + 1] = g > 255 ? 255 : g + 0.5;
      out[o + 2] = b > 255 ? 255 : b + 0.5;
    }
  }
}
