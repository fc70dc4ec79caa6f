import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ScreenshotStyle } from "@site/domain/screenshots";
import { SCREENS, WINDOW_SCREEN } from "./scene/screens.ts";
import { SCENE_DIR, THREE_BUILD } from "./scene_page.ts";

// The numbers a look comes to (frame size, screen aspect, chrome scale) and the key of its plate.

/** A clip's pose at one instant, degrees: the device's turn and the camera's move (scene main_browser.ts). */
export type ClipPose = { yaw: number; azimuth: number; elevation: number };

const SCENE_FILES = ["main_browser.ts", "devices_browser.ts", "screens.ts", "status_bar.ts"];
/** Changes whenever the scene's code or three.js does, so plates drawn by older code are not reused. */
const SCENE_VERSION = (() => {
  const h = createHash("sha256");
  h.update("plate-v1");
  for (const f of SCENE_FILES) h.update(readFileSync(join(SCENE_DIR, f)));
  h.update(readFileSync(join(THREE_BUILD, "three.core.js")).subarray(0, 4096));
  return h.digest("hex").slice(0, 16);
})();

/** The screen's height/width: the device's, or for the browser window the content's (2 % steps). */
export function screenAspect(
  style: ScreenshotStyle,
  capture: { width: number; height: number },
  chromeHeight: number,
): number {
  const device = style.look.device;
  if (device !== "window") return SCREENS[device].height / SCREENS[device].width;
  const ratio = (capture.height + chromeHeight) / capture.width;
  const clamped = Math.min(WINDOW_SCREEN.maxAspect, Math.max(WINDOW_SCREEN.minAspect, ratio));
  return Math.round(clamped * 50) / 50;
}

/**
 * The plate's cache key: what the plate depends on and nothing else (not the page, not the chrome bar,
 * which is part of the screen's content): the style's definition (so editing a style draws new plates),
 * theme, framing, frame size, screen aspect, and the scene code's version.
 */
export function plateKey(p: {
  style: ScreenshotStyle;
  theme: "light" | "dark";
  framing: number;
  width: number;
  height: number;
  aspect: number;
  /** A clip's pose (decision 1221); stills have none. */
  motion?: ClipPose;
}): string {
  const parts: unknown[] = [
    SCENE_VERSION,
    p.style.look,
    p.theme,
    p.framing,
    p.width,
    p.height,
    p.aspect.toFixed(4),
  ];
  if (p.motion) parts.push(["motion", p.motion.yaw, p.motion.azimuth, p.motion.elevation]);
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 40);
}

/** The output frame for a capture: as wide as the capture (1024 to 3840 px), 16:10. */
export function frameSize(capture: { width: number }): { width: number; height: number } {
  const width = Math.max(1024, Math.min(3840, Math.round(capture.width)));
  return { width, height: Math.round(width * 0.625) };
}

/** The chrome's device-pixel scale for a capture width (1440 CSS px reads as scale 1). */
export function chromeScale(captureWidth: number): number {
  return Math.max(0.75, Math.min(3, captureWidth / 1440));
}
