/** The image types the library accepts, with their file extension. */
export const IMAGE_TYPES = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "image/gif": "gif",
} as const;

/** An accepted image MIME type. */
export type ImageType = keyof typeof IMAGE_TYPES;

/** True for JPEG, PNG, WebP and GIF (never SVG). */
export function isImageType(value: string): value is ImageType {
  return Object.hasOwn(IMAGE_TYPES, value);
}

/** What the magic bytes say about a file. */
export type SniffedImage = { contentType: ImageType; width: number | null; height: number | null };

/** How many leading bytes sniffImage needs to read dimensions of nearly every file. */
export const SNIFF_BYTES = 1 << 20;

const ascii = (b: Uint8Array, at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));

function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) {
      i++;
      continue;
    }
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const len = (b[i + 2]! << 8) | b[i + 3]!;
    const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (sof) return { height: (b[i + 5]! << 8) | b[i + 6]!, width: (b[i + 7]! << 8) | b[i + 8]! };
    if (marker === 0xd9 || marker === 0xda) return null;
    i += 2 + len;
  }
  return null;
}

function webpSize(b: Uint8Array): { width: number; height: number } | null {
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8X" && b.length >= 30) {
    return {
      width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)),
      height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)),
    };
  }
  if (chunk === "VP8 " && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { width: (b[26]! | (b[27]! << 8)) & 0x3fff, height: (b[28]! | (b[29]! << 8)) & 0x3fff };
  }
  if (chunk === "VP8L" && b.length >= 25 && b[20] === 0x2f) {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return null;
}

const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);

/**
 * A GIF's size: its logical screen, grown to its first image where that reaches past it, as decoders do
 * (Skia's and Blink's GIF readers resize the screen to the first frame). GIF89a §18 (logical screen
 * descriptor), §20 (image descriptor), §15 (data sub-blocks): https://www.w3.org/Graphics/GIF/spec-gif89a.txt
 */
function gifSize(b: Uint8Array): { width: number; height: number } {
  let width = u16le(b, 6);
  let height = u16le(b, 8);
  let i = 13 + (b.length > 10 && b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 7) + 1) : 0);
  while (i < b.length) {
    if (b[i] === 0x21) {
      // An extension: its label, then sub-blocks until a zero length.
      i += 2;
      while (i < b.length && b[i] !== 0) i += b[i]! + 1;
      i++;
    } else {
      if (b[i] === 0x2c && i + 9 <= b.length) {
        width = Math.max(width, u16le(b, i + 1) + u16le(b, i + 5));
        height = Math.max(height, u16le(b, i + 3) + u16le(b, i + 7));
      }
      break;
    }
  }
  return { width, height };
}

/** Decides a file's type by its magic bytes (JPEG, PNG, WebP, GIF) and reads its size; null for anything else. */
export function sniffImage(b: Uint8Array): SniffedImage | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    const s = jpegSize(b);
    return { contentType: "image/jpeg", width: s?.width ?? null, height: s?.height ?? null };
  }
  if (b.length >= 24 && ascii(b, 0, 8) === "\x89PNG\r\n\x1a\n" && ascii(b, 12, 4) === "IHDR") {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return { contentType: "image/png", width: v.getUint32(16), height: v.getUint32(20) };
  }
  if (b.length >= 10 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")) {
    return { contentType: "image/gif", ...gifSize(b) };
  }
  if (b.length >= 16 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") {
    const s = webpSize(b);
    return { contentType: "image/webp", width: s?.width ?? null, height: s?.height ?? null };
  }
  return null;
}

/** What the magic bytes say about a file of the social library: an accepted image, or an MP4 video. */
export type SniffedMedia = {
  contentType: ImageType | "video/mp4";
  kind: "image" | "video";
  width: number | null;
  height: number | null;
};

/**
 * Decides a file's type by its magic bytes: an image of sniffImage, or MP4 (an ISO BMFF `ftyp` box
 * first, https://www.iso.org/standard/83102.html, brands of the MP4 family); null for anything else.
 */
export function sniffMedia(b: Uint8Array): SniffedMedia | null {
  const image = sniffImage(b);
  if (image) return { ...image, kind: "image" };
  if (b.length >= 12 && ascii(b, 4, 4) === "ftyp") {
    const brand = ascii(b, 8, 4);
    if (/^(isom|iso[2-9]|mp41|mp42|avc1|dash|M4V |mmp4)$/.test(brand))
      return { contentType: "video/mp4", kind: "video", width: null, height: null };
  }
  return null;
}
