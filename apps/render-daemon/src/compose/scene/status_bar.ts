// A phone's status bar, drawn by both compose paths from this one file: the 3D scene in the compositor
// page (main_browser.ts, a browser canvas) and the daemon's fast path (warp.ts, @napi-rs/canvas), so the
// two cannot drift. It runs in both places: no imports.

/** The 2D canvas calls the status bar makes; a browser canvas and @napi-rs/canvas both have them. */
export type StatusBarCanvas = {
  fillStyle: unknown;
  strokeStyle: unknown;
  font: string;
  textBaseline: unknown;
  textAlign: unknown;
  lineWidth: number;
  globalAlpha: number;
  fillRect(x: number, y: number, w: number, h: number): void;
  fillText(text: string, x: number, y: number): void;
  beginPath(): void;
  roundRect(x: number, y: number, w: number, h: number, r: number): void;
  stroke(): void;
  fill(): void;
};

/** The font families the bar's clock is set in, first found first: those the daemon's fonts.ts registers. */
export const STATUS_BAR_FONT = '"DejaVu Sans", "Liberation Sans", sans-serif';

/** The bar's height for a screen texture `width` pixels wide. */
export function statusBarHeight(width: number): number {
  return Math.round(width * 0.125);
}

/**
 * Draws a phone status bar (time, signal, battery) across the top of a `w`-wide texture, in the page's
 * top colour `rgb` with black or white ink by its luminance; returns its height. `font`: the family to
 * set the clock in (the browser names STATUS_BAR_FONT; the daemon its registered copy of the same file).
 */
export function drawStatusBar(
  g: StatusBarCanvas,
  w: number,
  opts: { rgb: [number, number, number]; font?: string },
): number {
  const { rgb } = opts;
  const h = statusBarHeight(w);
  g.fillStyle = `rgb(${rgb.join(",")})`;
  g.fillRect(0, 0, w, h);
  const ink = rgb[0] * 0.299 + rgb[1] * 0.587 + rgb[2] * 0.114 > 140 ? "#000000" : "#ffffff";
  const u = w / 390;
  g.fillStyle = ink;
  g.strokeStyle = ink;
  g.font = `600 ${17 * u}px ${opts.font ?? STATUS_BAR_FONT}`;
  g.textBaseline = "middle";
  g.textAlign = "center";
  const cy = h * 0.52;
  g.fillText("9:41", 62 * u, cy);
  for (let i = 0; i < 4; i++) {
    const bh = (4 + i * 2.6) * u;
    g.fillRect((290 + i * 5.2) * u, cy + 5.5 * u - bh, 3.4 * u, bh);
  }
  g.lineWidth = 1.1 * u;
  g.globalAlpha = 0.45;
  g.beginPath();
  g.roundRect(326 * u, cy - 6 * u, 25 * u, 12 * u, 3.5 * u);
  g.stroke();
  g.globalAlpha = 1;
  g.beginPath();
  g.roundRect(328 * u, cy - 4 * u, 18 * u, 8 * u, 2 * u);
  g.fill();
  g.fillRect(352.5 * u, cy - 2 * u, 1.6 * u, 4 * u);
  return h;
}
