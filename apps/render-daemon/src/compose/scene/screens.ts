// Shared by the daemon and the compositor page: each device's screen size in scene units.
import type { DeviceKind } from "@site/domain/screenshots";

/** Screen width and height (scene units) of the fixed-screen devices; the window's height follows its content. */
export const SCREENS: Record<Exclude<DeviceKind, "window">, { width: number; height: number }> = {
  laptop: { width: 3.0, height: 1.875 },
  monitor: { width: 4.0, height: 2.5 },
  tablet: { width: 3.0, height: 2.1 },
  phone: { width: 1.0, height: 2.165 },
};

/** The browser window's screen width (scene units) and the bounds of its height/width ratio. */
export const WINDOW_SCREEN = { width: 3.2, minAspect: 0.42, maxAspect: 1.0 };
