import { createCanvas, loadImage } from "@napi-rs/canvas";

/** Reads the pixel size of a PNG from its IHDR header. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  if (png.byteLength < 24 || v.getUint32(0) !== 0x89504e47) throw new Error("not a PNG");
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** Decodes an image (PNG, WebP, JPEG) to RGBA pixels. */
export async function decodeImage(
  bytes: Uint8Array,
): Promise<{ data: Uint8ClampedArray; width: number; height: number }> {
  const img = await loadImage(Buffer.from(bytes));
  const canvas = createCanvas(img.width, img.height);
  const g = canvas.getContext("2d");
  g.drawImage(img, 0, 0);
  const data = g.getImageData(0, 0, img.width, img.height).data;
  return { data, width: img.width, height: img.height };
}

/** Re-encodes an image, optionally scaled to `width` (aspect kept): WebP at `quality`, or PNG. */
export async function reencode(
  bytes: Uint8Array,
  opts: { format: "webp" | "png"; width?: number; quality?: number },
): Promise<{ bytes: Uint8Array; width: number; height: number }> {
  const img = await loadImage(Buffer.from(bytes));
  const width = Math.round(opts.width ?? img.width);
  const height = Math.round((img.height * width) / img.width);
  const canvas = createCanvas(width, height);
  const g = canvas.getContext("2d");
  g.imageSmoothingQuality = "high";
  g.drawImage(img, 0, 0, width, height);
  const out =
    opts.format === "webp" ? await canvas.encode("webp", opts.quality ?? 85) : await canvas.encode("png");
  return { bytes: new Uint8Array(out), width, height };
}
