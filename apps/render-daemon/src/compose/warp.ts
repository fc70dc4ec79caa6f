// The fast path of compositing, on the CPU: a projective warp of the screen image onto a plate.
import { createCanvas, type Image, loadImage } from "@napi-rs/canvas";
import { chromeFont } from "../frame/fonts.ts";
import { drawStatusBar } from "./scene/status_bar.ts";

/** A 3×3 projective transform, row-major, h[8] = 1. */
export type Homography = Float64Array;

/**
 * The homography taking each `from[i]` to `to[i]` (four points, no three collinear), by solving the
 * 8×8 linear system of the direct linear transform with partial pivoting.
 */
export function homography(from: [number, number][], to: [number, number][]): Homography {
  const a: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i];
    const [u, v] = to[i];
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    if (Math.abs(a[p][c]) < 1e-12) throw new Error("degenerate screen quad");
    [a[c], a[p]] = [a[p], a[c]];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let k = c; k < 9; k++) a[r][k] -= f * a[c][k];
    }
  }
  const h = new Float64Array(9);
  for (let i = 0; i < 8; i++) h[i] = a[i][8] / a[i][i];
  h[8] = 1;
  return h;
}

/** The homography from a plate's screen corners to the corners of a `width`×`height` screen image. */
export function screenHomography(corners: [number, number][], width: number, height: number): Homography {
  return homography(corners, [
    [0, 0],
    [width, 0],
    [width, height],
    [0, height],
  ]);
}

/** Applies a homography to a point. */
export function project(h: Homography, x: number, y: number): [number, number] {
  const d = h[6] * x + h[7] * y + h[8];
  return [(h[0] * x + h[1] * y + h[2]) / d, (h[3] * x + h[4] * y + h[5]) / d];
}

/** RGBA pixels, top row first. */
export type Pixels = { data: Uint8Array | Uint8ClampedArray; width: number; height: number };

/** A plate as the warp reads it: the frame with the screen dark, the screen's coverage, its corners. */
export type PlatePixels = {
  width: number;
  height: number;
  /** RGBA, alpha 255: everything but the page. */
  base: Uint8Array;
  /** 0..255 per pixel: how much of the page shows through. */
  mask: Uint8Array;
  /** Frame pixels of the screen's top-left, top-right, bottom-right, bottom-left corners. */
  corners: [number, number][];
  /** The rows and columns where mask > 0: [x0, y0, x1, y1) */
  bbox: [number, number, number, number];
};

/** How large the screen appears in the frame: its longest top/bottom edge and left/right edge, in pixels. */
export function screenExtent(corners: [number, number][]): { width: number; height: number } {
  const d = (a: [number, number], b: [number, number]) => Math.hypot(a[0] - b[0], a[1] - b[1]);
  const [tl, tr, br, bl] = corners;
  return { width: Math.max(d(tl, tr), d(bl, br)), height: Math.max(d(tl, bl), d(tr, br)) };
}

/**
 * Warps `screen` (the screen's content, its corners at the image's corners) onto the plate and
 * composites: out = base + coverage × page. Bilinear sampling; the caller pre-scales a screen image
 * that would be minified (area filtering), so bilinear never skips source pixels. Writes into `out`
 * (RGBA, width × height × 4 bytes, at `offset`).
 */
export function warpComposite(plate: PlatePixels, screen: Pixels, out: Uint8Array, offset = 0): void {
  // the same loop as a clip's frame: a window the screen's size, no header, no scroll, reads every pixel
  // as before (v clamped to height − 0.5, then − 0.5, is the old clamp to the last row)
  warpWindow(plate, screen, { width: screen.width, height: screen.height, header: 0, dy: 0 }, out, offset);
}

/**
 * Warps a window of `strip` onto the plate's screen quad and composites into `out` (RGBA at `offset`):
 * out = base + coverage × page. Screen rows above `header` show the strip's fixed header; below it, the
 * strip `dy` rows further down (fractional: sampled bilinearly, so a slow scroll never steps). A clip's
 * frame (decision 1200) and, with the window the whole screen image, the still's warp.
 */
export function warpWindow(
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
  const h = screenHomography(plate.corners, window.width, window.height);
  const [x0, y0, x1, y1] = plate.bbox;
  const maxX = sw - 1;
  const maxY = stripH - 1;
  const maxWinY = window.height - 0.5;
  for (let y = y0; y < y1; y++) {
    const Y = y + 0.5;
    // numerators and denominator are linear in x along a row: step them
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

/** A decoded capture: the image, and the pixels a screen image continues the page with. */
export type DecodedCapture = {
  image: Image;
  width: number;
  height: number;
  /** Bottom-left pixel: a page shorter than the screen continues in it. */
  bottom: [number, number, number];
  /** Near the top-left: a phone's status bar takes the page's top colour. */
  top: [number, number, number];
};

/** Decodes a capture PNG once. */
export async function decodeCapture(png: Uint8Array): Promise<DecodedCapture> {
  const image = await loadImage(Buffer.from(png));
  const probe = (x: number, y: number): [number, number, number] => {
    const c = createCanvas(1, 1);
    const g = c.getContext("2d");
    g.drawImage(image, x, y, 1, 1, 0, 0, 1, 1);
    const d = g.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2]];
  };
  return {
    image,
    width: image.width,
    height: image.height,
    bottom: probe(0, image.height - 1),
    top: probe(Math.min(2, image.width - 1), Math.min(2, image.height - 1)),
  };
}

/**
 * The screen's content as the 3D reference textures it (0451: chrome bar and page stacked, width fit,
 * top aligned, the rest in the page's bottom colour; phones get a status bar), drawn directly at
 * `target` size: a minified screen is area-filtered here once, so the warp's bilinear taps see every
 * source pixel. `texWidth` is the reference texture's width (the capture's, at most 4096).
 */
export function screenImage(opts: {
  capture: DecodedCapture;
  chrome: { image: Image; height: number } | null;
  phone: boolean;
  aspect: number;
  target: { width: number; height: number };
  /** Only measure the header (no pixels are read back): a clip sizes its strip with it. */
  measure?: boolean;
}): Pixels & { header: number } {
  const { capture, chrome, target } = opts;
  const texW = Math.min(capture.width, 4096);
  const texH = Math.max(1, Math.round(texW * opts.aspect));
  const tw = Math.max(1, Math.min(texW, Math.ceil(target.width)));
  const th = Math.max(1, Math.round((tw * texH) / texW));
  const canvas = createCanvas(tw, opts.measure ? 1 : th);
  const g = canvas.getContext("2d");
  g.imageSmoothingEnabled = true;
  g.imageSmoothingQuality = "high";
  const k = tw / texW; // texture pixels → target pixels
  g.fillStyle = `rgb(${capture.bottom.join(",")})`;
  g.fillRect(0, 0, tw, th);
  let y = 0;
  if (opts.phone) {
    g.save();
    g.scale(k, k);
    y = drawStatusBar(g, texW, { rgb: capture.top, font: chromeFont() }) * k;
    g.restore();
  }
  const s = texW / capture.width; // capture pixels → texture pixels
  if (chrome) {
    const bh = chrome.height * s * k;
    g.drawImage(chrome.image, 0, y, tw, bh);
    y += bh;
  }
  const header = y;
  if (opts.measure) return { data: new Uint8Array(0), width: tw, height: th, header };
  const visible = Math.min(capture.height, Math.ceil((th - y) / (s * k)));
  if (visible > 0) g.drawImage(capture.image, 0, 0, capture.width, visible, 0, y, tw, visible * s * k);
  return { data: g.getImageData(0, 0, tw, th).data, width: tw, height: th, header };
}

/** A BMP (BITMAPV4, 32-bit BGRA masks, top-down) header for RGBA pixels: Bun.Image reads it without a copy. */
const BMP_HEADER = 14 + 108;

/** A buffer for a frame of `width × height` RGBA pixels behind a BMP header (pixels at `BMP_HEADER`). */
export function frameBuffer(width: number, height: number): { bytes: Uint8Array; offset: number } {
  const size = BMP_HEADER + width * height * 4;
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  bytes[0] = 0x42;
  bytes[1] = 0x4d;
  v.setUint32(2, size, true);
  v.setUint32(10, BMP_HEADER, true);
  v.setUint32(14, 108, true);
  v.setInt32(18, width, true);
  v.setInt32(22, -height, true); // top-down rows
  v.setUint16(26, 1, true);
  v.setUint16(28, 32, true);
  v.setUint32(30, 3, true); // BI_BITFIELDS
  v.setUint32(34, width * height * 4, true);
  v.setUint32(54, 0x000000ff, true); // red mask: first byte
  v.setUint32(58, 0x0000ff00, true);
  v.setUint32(62, 0x00ff0000, true);
  v.setUint32(66, 0xff000000, true);
  v.setUint32(70, 0x73524742, true); // "sRGB"
  return { bytes, offset: BMP_HEADER };
}

/** Encodes a frame buffer as JPEG (libjpeg-turbo in Bun.Image, on a worker thread). */
export async function encodeFrame(frame: { bytes: Uint8Array }, quality: number): Promise<Uint8Array> {
  return await new Bun.Image(frame.bytes).jpeg({ quality }).bytes();
}
