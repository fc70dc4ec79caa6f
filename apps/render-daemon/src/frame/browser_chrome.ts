import { createCanvas } from "@napi-rs/canvas";
import { chromeFont } from "./fonts.ts";

/** The height of the browser title bar in CSS pixels. */
export const CHROME_BAR_CSS_HEIGHT = 52;

const THEMES = {
  light: {
    top: "#f6f6f8",
    bottom: "#e9e9ee",
    line: "#d4d4db",
    field: "#ffffff",
    fieldLine: "#dedee5",
    text: "#34343c",
    muted: "#8b8b96",
  },
  dark: {
    top: "#323238",
    bottom: "#28282d",
    line: "#18181b",
    field: "#1c1c20",
    fieldLine: "#3c3c44",
    text: "#e8e8ee",
    muted: "#8e8e99",
  },
} as const;

/**
 * Draws a browser title bar `width` device pixels wide: traffic lights, back/forward, the address field
 * with a lock and the page's host. Returns PNG bytes and the bar's height in device pixels.
 */
export async function drawChromeBar(opts: {
  width: number;
  scale: number;
  theme: "light" | "dark";
  host: string;
}): Promise<{ png: Uint8Array; width: number; height: number }> {
  const s = Math.max(0.5, opts.scale);
  const w = Math.max(1, Math.round(opts.width));
  const h = Math.round(CHROME_BAR_CSS_HEIGHT * s);
  const c = THEMES[opts.theme];
  const canvas = createCanvas(w, h);
  const g = canvas.getContext("2d");
  const grad = g.createLinearGradient(0, 0, 0, h);
  grad.addColorStop(0, c.top);
  grad.addColorStop(1, c.bottom);
  g.fillStyle = grad;
  g.fillRect(0, 0, w, h);
  g.fillStyle = c.line;
  g.fillRect(0, h - Math.max(1, Math.round(s)), w, Math.max(1, Math.round(s)));

  const cy = h / 2;
  const lights = ["#ff5f57", "#febc2e", "#28c840"];
  lights.forEach((color, i) => {
    g.beginPath();
    g.arc((20 + i * 20) * s, cy, 6 * s, 0, Math.PI * 2);
    g.fillStyle = color;
    g.fill();
    g.lineWidth = 0.5 * s;
    g.strokeStyle = "rgba(0,0,0,0.12)";
    g.stroke();
  });

  // back / forward chevrons
  g.strokeStyle = c.muted;
  g.lineWidth = 1.8 * s;
  g.lineCap = "round";
  g.lineJoin = "round";
  for (const [x, dir] of [
    [92, -1],
    [116, 1],
  ] as const) {
    g.beginPath();
    g.moveTo((x - dir * -3) * s, cy - 6 * s);
    g.lineTo((x + dir * 3) * s, cy);
    g.lineTo((x - dir * -3) * s, cy + 6 * s);
    g.stroke();
  }

  // address field, centred, at most 560 CSS px wide
  const fieldW = Math.min(560 * s, w - 300 * s);
  if (fieldW > 80 * s) {
    const fx = (w - fieldW) / 2;
    const fh = 30 * s;
    const fy = cy - fh / 2;
    g.beginPath();
    g.roundRect(fx, fy, fieldW, fh, 8 * s);
    g.fillStyle = c.field;
    g.fill();
    g.lineWidth = 1 * s;
    g.strokeStyle = c.fieldLine;
    g.stroke();

    const font = chromeFont();
    g.font = `${13 * s}px ${font}`;
    const host = opts.host.length > 60 ? `${opts.host.slice(0, 57)}…` : opts.host;
    const tw = g.measureText(host).width;
    const lockW = 14 * s;
    const tx = fx + fieldW / 2 - (tw + lockW) / 2 + lockW;
    // lock: shackle + body
    const lx = tx - lockW + 2 * s;
    g.fillStyle = c.muted;
    g.strokeStyle = c.muted;
    g.lineWidth = 1.4 * s;
    g.beginPath();
    g.arc(lx + 4 * s, cy - 2 * s, 2.8 * s, Math.PI, 0);
    g.stroke();
    g.beginPath();
    g.roundRect(lx, cy - 2 * s, 8 * s, 7 * s, 1.5 * s);
    g.fill();
    g.fillStyle = c.text;
    g.textBaseline = "middle";
    g.fillText(host, tx, cy + 0.5 * s);
  }
  const png = await canvas.encode("png");
  return { png: new Uint8Array(png), width: w, height: h };
}
