// How a clip moves (decision 1221): the page's scroll and the device's pose, frame by frame.
import type { ClipPose } from "../compose/compositor.ts";

/** The motions a clip makes. */
export type Motion = "scroll" | "scroll-tilt" | "orbit";

/** Ease in and out (a half cosine): starts and ends at rest, no jump in speed anywhere. */
export function easeInOut(t: number): number {
  const c = Math.min(1, Math.max(0, t));
  return (1 - Math.cos(Math.PI * c)) / 2;
}

/** Share of the clip the page rests at its top before scrolling, and at its end after. */
export const SCROLL_HOLD = 0.06;

/** How far down the page is scrolled at time `t` (0..1 of the clip): 0 at the top, 1 at the end. */
export function scrollAt(t: number): number {
  return easeInOut((t - SCROLL_HOLD) / (1 - 2 * SCROLL_HOLD));
}

/** The greatest device turn of `orbit` (either side) and camera move of `scroll-tilt`, degrees. */
export const ORBIT_DEGREES = 18;
export const TILT_AZIMUTH = 5;
export const TILT_ELEVATION = 2.5;

/** How many stored angles a motion draws its device from (0.5–2° apart), 1 for a still device. */
export function plateCount(motion: Motion): number {
  if (motion === "orbit") return 19;
  if (motion === "scroll-tilt") return 11;
  return 1;
}

/** The pose at motion parameter `m` (0..1 along the motion's path). */
export function poseAt(motion: Motion, m: number): ClipPose {
  const s = m * 2 - 1; // −1 .. 1
  if (motion === "orbit") return { yaw: round(-ORBIT_DEGREES * s), azimuth: 0, elevation: 0 };
  if (motion === "scroll-tilt")
    return { yaw: 0, azimuth: round(-TILT_AZIMUTH * s), elevation: round(TILT_ELEVATION * s) };
  return { yaw: 0, azimuth: 0, elevation: 0 };
}

const round = (x: number) => Math.round(x * 1000) / 1000 + 0;

/** The poses a motion's plates are drawn at: evenly spaced along its path, both ends included. */
export function platePoses(motion: Motion): ClipPose[] {
  const n = plateCount(motion);
  if (n === 1) return [poseAt(motion, 0.5)];
  return Array.from({ length: n }, (_, k) => poseAt(motion, k / (n - 1)));
}

/**
 * Frame `i` of `frames`: the scroll (0..1) and where it stands between the stored plates (`plate`
 * index, `blend` toward the next one). The device's path eases over the whole clip, the scroll over
 * all but its holds; the frame step is constant in time, so the motion has no judder.
 */
export function frameAt(
  motion: Motion,
  i: number,
  frames: number,
): { scroll: number; plate: number; blend: number } {
  const t = frames <= 1 ? 0 : i / (frames - 1);
  const n = plateCount(motion);
  const at = easeInOut(t) * (n - 1);
  const plate = Math.min(n - 1, Math.floor(at));
  return { scroll: scrollAt(t), plate, blend: n === 1 ? 0 : at - plate };
}
