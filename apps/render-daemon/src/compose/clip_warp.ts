// A clip's frame on the CPU: the still's plate + warp (decision 1200), with the screen's window scrolled
// through a tall strip and, for a moving device, the plate taken between two stored angles.
import type { PlatePixels } from "./warp.ts";

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
