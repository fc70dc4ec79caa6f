import { type ScreenshotStyleView, STYLE_LIMIT, type StyleListQuery } from "./models.ts";

/** The device a capture is framed in. */
export type DeviceKind = "laptop" | "monitor" | "tablet" | "phone" | "window";

/** A background: a base linear gradient plus soft colour glows (a "mesh" gradient). */
export type StyleBackground = {
  from: string;
  to: string;
  /** Degrees; 0 runs top to bottom. */
  angle: number;
  glows: { x: number; y: number; r: number; color: string; alpha: number }[];
};

/** Everything the compositor reads to stage one style. */
export type StyleLook = {
  device: DeviceKind;
  /** Body finish of the device. */
  finish: "silver" | "graphite" | "midnight" | "white";
  /** Camera: degrees around the device (0 = straight on), degrees above it, lens field of view. */
  camera: { azimuth: number; elevation: number; fov: number; margin: number; lift?: number };
  /** Extra rotation of the device itself, degrees (x tilt, y turn, z roll). */
  rotation: [number, number, number];
  /** Key light direction (degrees), its strength, the fill (ambient) and the environment reflections. */
  light: { azimuth: number; elevation: number; key: number; fill: number; env: number; warmth: number };
  /** Soft shadow: how dark, how soft, and what it falls on. */
  shadow: { opacity: number; softness: number; surface: "floor" | "wall" };
  background: { light: StyleBackground; dark: StyleBackground };
  /** Suggested capture viewport when filming for this style (previews use it). */
  viewport?: { width: number; height: number; deviceScaleFactor: number };
};

/** A catalog entry: the spec's style metadata plus its look. */
export type ScreenshotStyle = {
  id: string;
  name: string;
  description: string;
  featured: boolean;
  author: string;
  previewSourceHost: string;
  look: StyleLook;
};

/** The host of the bundled demo page every preview films. */
export const PREVIEW_SOURCE_HOST = "lumen.example";

const AUTHOR = "Site Studio";

const bg = (
  from: string,
  to: string,
  angle: number,
  glows: StyleBackground["glows"] = [],
): StyleBackground => ({ from, to, angle, glows });

const soft = { opacity: 0.32, softness: 1, surface: "floor" as const };

const CATALOG: ScreenshotStyle[] = [
  {
    id: "laptop-studio",
    name: "Studio Laptop",
    description: "A silver laptop at a three-quarter angle on a soft studio backdrop.",
    featured: true,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "laptop",
      finish: "silver",
      camera: { azimuth: -24, elevation: 16, fov: 28, margin: 0.07 },
      rotation: [0, 0, 0],
      light: { azimuth: -35, elevation: 55, key: 2.2, fill: 0.7, env: 0.9, warmth: 0.1 },
      shadow: soft,
      background: {
        light: bg("#eef2ff", "#dfe7f5", 0, [
          { x: 0.15, y: 0.1, r: 0.6, color: "#c7d7ff", alpha: 0.7 },
          { x: 0.9, y: 0.85, r: 0.55, color: "#f5d9ff", alpha: 0.5 },
        ]),
        dark: bg("#151a2e", "#0b0e19", 0, [
          { x: 0.2, y: 0.15, r: 0.6, color: "#2b3a78", alpha: 0.7 },
          { x: 0.85, y: 0.9, r: 0.5, color: "#4a2a6e", alpha: 0.55 },
        ]),
      },
    },
  },
  {
    id: "laptop-midnight",
    name: "Midnight Laptop",
    description: "A graphite laptop straight on, lit from above against a deep indigo glow.",
    featured: true,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "laptop",
      finish: "graphite",
      camera: { azimuth: 0, elevation: 12, fov: 26, margin: 0.1 },
      rotation: [0, 0, 0],
      light: { azimuth: 10, elevation: 65, key: 2.0, fill: 0.5, env: 0.8, warmth: -0.1 },
      shadow: { opacity: 0.45, softness: 1.2, surface: "floor" },
      background: {
        light: bg("#e7e9ff", "#c9cdf6", 0, [
          { x: 0.5, y: 0.0, r: 0.7, color: "#ffffff", alpha: 0.8 },
          { x: 0.5, y: 1.0, r: 0.6, color: "#a7b0ff", alpha: 0.5 },
        ]),
        dark: bg("#1a1446", "#07061a", 0, [
          { x: 0.5, y: 0.05, r: 0.75, color: "#5b4bff", alpha: 0.55 },
          { x: 0.1, y: 0.95, r: 0.5, color: "#c042ff", alpha: 0.3 },
        ]),
      },
    },
  },
  {
    id: "browser-float",
    name: "Floating Window",
    description: "A browser window floating over a bright gradient with a long soft shadow.",
    featured: true,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "window",
      finish: "white",
      camera: { azimuth: 0, elevation: 0, fov: 24, margin: 0.09 },
      rotation: [6, -14, 0],
      light: { azimuth: -30, elevation: 40, key: 1.6, fill: 0.9, env: 0.5, warmth: 0 },
      shadow: { opacity: 0.3, softness: 1.6, surface: "wall" },
      background: {
        light: bg("#5b8cff", "#a26bff", 35, [
          { x: 0.0, y: 0.0, r: 0.6, color: "#7de3ff", alpha: 0.6 },
          { x: 1.0, y: 1.0, r: 0.6, color: "#ff8ad8", alpha: 0.5 },
        ]),
        dark: bg("#1d2b64", "#3b1d5e", 35, [
          { x: 0.0, y: 0.0, r: 0.6, color: "#1f6f9c", alpha: 0.5 },
          { x: 1.0, y: 1.0, r: 0.6, color: "#7a2a7a", alpha: 0.45 },
        ]),
      },
    },
  },
  {
    id: "phone-hero",
    name: "Phone Hero",
    description: "A phone turned toward the viewer over a warm sunset gradient.",
    featured: true,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "phone",
      finish: "midnight",
      camera: { azimuth: 0, elevation: 4, fov: 24, margin: 0.1 },
      rotation: [4, -22, 4],
      light: { azimuth: -40, elevation: 45, key: 2.0, fill: 0.7, env: 1.0, warmth: 0.15 },
      shadow: { opacity: 0.3, softness: 1.6, surface: "wall" },
      background: {
        light: bg("#ffb199", "#ff6fa3", 20, [
          { x: 0.1, y: 0.1, r: 0.6, color: "#ffe29f", alpha: 0.7 },
          { x: 0.95, y: 0.9, r: 0.6, color: "#b86bff", alpha: 0.45 },
        ]),
        dark: bg("#3a1631", "#140a1f", 20, [
          { x: 0.1, y: 0.1, r: 0.6, color: "#8a3a4a", alpha: 0.5 },
          { x: 0.9, y: 0.9, r: 0.6, color: "#4a2a8a", alpha: 0.5 },
        ]),
      },
      viewport: { width: 390, height: 844, deviceScaleFactor: 3 },
    },
  },
  {
    id: "desktop-clean",
    name: "Clean Desktop",
    description: "A large display on a slim stand, slightly turned, on warm sand tones.",
    featured: true,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "monitor",
      finish: "silver",
      camera: { azimuth: 18, elevation: 8, fov: 26, margin: 0.1 },
      rotation: [0, 0, 0],
      light: { azimuth: 35, elevation: 68, key: 2.0, fill: 0.75, env: 0.9, warmth: 0.25 },
      shadow: soft,
      background: {
        light: bg("#f6efe6", "#e8dccb", 0, [{ x: 0.8, y: 0.1, r: 0.6, color: "#fff7ec", alpha: 0.8 }]),
        dark: bg("#2a241e", "#14110e", 0, [{ x: 0.8, y: 0.1, r: 0.6, color: "#4a3a2a", alpha: 0.6 }]),
      },
    },
  },
  {
    id: "tablet-tilt",
    name: "Tilted Tablet",
    description: "A landscape tablet leaning back in space over a fresh mint gradient.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "tablet",
      finish: "silver",
      camera: { azimuth: 0, elevation: 0, fov: 26, margin: 0.1 },
      rotation: [-18, 20, 3],
      light: { azimuth: -30, elevation: 50, key: 2.0, fill: 0.75, env: 1.0, warmth: 0 },
      shadow: { opacity: 0.28, softness: 1.6, surface: "wall" },
      background: {
        light: bg("#d4fbe8", "#9ee6d0", 30, [{ x: 0.9, y: 0.1, r: 0.6, color: "#e7fff5", alpha: 0.8 }]),
        dark: bg("#0f2a25", "#06140f", 30, [{ x: 0.9, y: 0.1, r: 0.6, color: "#1d5a4a", alpha: 0.6 }]),
      },
    },
  },
  {
    id: "browser-flat",
    name: "Flat Window",
    description: "A browser window straight on, for documentation and changelogs.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "window",
      finish: "white",
      camera: { azimuth: 0, elevation: 0, fov: 20, margin: 0.1 },
      rotation: [0, 0, 0],
      light: { azimuth: 0, elevation: 60, key: 1.4, fill: 1.0, env: 0.4, warmth: 0 },
      shadow: { opacity: 0.25, softness: 1.3, surface: "wall" },
      background: {
        light: bg("#f4f6fb", "#e6eaf2", 0),
        dark: bg("#1b1e26", "#111318", 0),
      },
    },
  },
  {
    id: "laptop-overhead",
    name: "Overhead Laptop",
    description: "A laptop seen from high above on a cool slate desk.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "laptop",
      finish: "silver",
      camera: { azimuth: 0, elevation: 42, fov: 26, margin: 0.08 },
      rotation: [0, 0, 0],
      light: { azimuth: -20, elevation: 70, key: 2.0, fill: 0.7, env: 0.9, warmth: 0 },
      shadow: soft,
      background: {
        light: bg("#e3e8ef", "#c9d2de", 0),
        dark: bg("#20262f", "#10141a", 0),
      },
    },
  },
  {
    id: "monitor-night",
    name: "Night Desk",
    description: "A graphite display turned left under a cool rim light on charcoal.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "monitor",
      finish: "graphite",
      camera: { azimuth: -22, elevation: 10, fov: 26, margin: 0.1 },
      rotation: [0, 0, 0],
      light: { azimuth: -50, elevation: 62, key: 1.8, fill: 0.45, env: 0.8, warmth: -0.2 },
      shadow: { opacity: 0.5, softness: 1.2, surface: "floor" },
      background: {
        light: bg("#dfe3ea", "#b9c1cd", 0, [{ x: 0.2, y: 0.2, r: 0.6, color: "#ffffff", alpha: 0.6 }]),
        dark: bg("#23262d", "#0c0d10", 0, [{ x: 0.2, y: 0.2, r: 0.6, color: "#2f3c55", alpha: 0.6 }]),
      },
    },
  },
  {
    id: "phone-straight",
    name: "Phone Portrait",
    description: "A phone face on, centred on a clean pastel field.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "phone",
      finish: "white",
      camera: { azimuth: 0, elevation: 0, fov: 22, margin: 0.11 },
      rotation: [0, 0, 0],
      light: { azimuth: -20, elevation: 50, key: 1.8, fill: 0.85, env: 0.9, warmth: 0 },
      shadow: { opacity: 0.25, softness: 1.4, surface: "wall" },
      background: {
        light: bg("#e9e4ff", "#fde2f3", 45),
        dark: bg("#221d3a", "#2e1a2a", 45),
      },
      viewport: { width: 390, height: 844, deviceScaleFactor: 3 },
    },
  },
  {
    id: "window-perspective",
    name: "Perspective Window",
    description: "A browser window turned deep into perspective, for hero sections.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "window",
      finish: "white",
      camera: { azimuth: 0, elevation: 0, fov: 26, margin: 0.06 },
      rotation: [18, -28, 8],
      light: { azimuth: -30, elevation: 45, key: 1.6, fill: 0.9, env: 0.5, warmth: 0 },
      shadow: { opacity: 0.3, softness: 1.8, surface: "wall" },
      background: {
        light: bg("#0f172a", "#1e3a8a", 150, [
          { x: 0.85, y: 0.15, r: 0.6, color: "#38bdf8", alpha: 0.45 },
          { x: 0.1, y: 0.9, r: 0.5, color: "#a855f7", alpha: 0.4 },
        ]),
        dark: bg("#05070f", "#111a3a", 150, [
          { x: 0.85, y: 0.15, r: 0.6, color: "#0e4a6e", alpha: 0.5 },
          { x: 0.1, y: 0.9, r: 0.5, color: "#4a1d7a", alpha: 0.45 },
        ]),
      },
    },
  },
  {
    id: "tablet-desk",
    name: "Tablet on Desk",
    description: "A tablet lying on a pale desk, seen from above at an angle.",
    featured: false,
    author: AUTHOR,
    previewSourceHost: PREVIEW_SOURCE_HOST,
    look: {
      device: "tablet",
      finish: "graphite",
      camera: { azimuth: -15, elevation: 55, fov: 26, margin: 0.08 },
      rotation: [-90, 0, 0],
      light: { azimuth: -30, elevation: 60, key: 1.9, fill: 0.75, env: 0.9, warmth: 0.1 },
      shadow: { opacity: 0.35, softness: 1.2, surface: "floor" },
      background: {
        light: bg("#f2f0ec", "#dcd8d0", 0),
        dark: bg("#1e1d1b", "#0e0d0c", 0),
      },
    },
  },
];

/** The look used when a request names no style: the floating browser window. */
export const DEFAULT_STYLE_ID = "browser-float";

/** Lists the catalog: featured first when asked, capped at `limit` (default 50, max 100). */
export function listStyles(query: StyleListQuery = {}): ScreenshotStyle[] {
  const all = query.featured ? CATALOG.filter((s) => s.featured) : CATALOG;
  return all.slice(
    0,
    Math.max(STYLE_LIMIT.min, Math.min(query.limit ?? STYLE_LIMIT.default, STYLE_LIMIT.max)),
  );
}

/** One style by id, or null for an unknown id (callers answer 404, never a default). */
export function findStyle(id: string): ScreenshotStyle | null {
  return CATALOG.find((s) => s.id === id) ?? null;
}

/** The style a look resolves to: the named one, or the default look when none is named; null when unknown. */
export function resolveStyle(id: string | null | undefined): ScreenshotStyle | null {
  return id == null ? (findStyle(DEFAULT_STYLE_ID) as ScreenshotStyle) : findStyle(id);
}

/** The API view of a style, with its preview served under `publicBaseUrl`. */
export function styleView(style: ScreenshotStyle, publicBaseUrl: string): ScreenshotStyleView {
  return {
    id: style.id,
    name: style.name,
    description: style.description,
    featured: style.featured,
    author: style.author,
    previewImageUrl: `${publicBaseUrl.replace(/\/$/, "")}/api/v1/public/screenshot-styles/${style.id}/preview`,
    previewSourceHost: style.previewSourceHost,
  };
}

/** The styles listing as the API answers it: featured narrowing, limit, preview URLs under `publicBaseUrl`. */
export function listStyleViews(publicBaseUrl: string, query: StyleListQuery = {}): ScreenshotStyleView[] {
  return listStyles(query).map((s) => styleView(s, publicBaseUrl));
}
