import { describe, expect, test } from "bun:test";
import { AppError } from "@site/domain/core";
import { pixelBombPng, sampleImage } from "@site/domain/testing";
import { sniffImage } from "./image_types.ts";
import { pixelRefusal } from "./pixels.ts";

// Pixels before bytes (CONTRACT.md "Bounded: retries, replays, images"): the size an image's header
// declares decides, before any decoder sees it. Each format's header is crafted here by hand.

const MAX = 40_000_000;
const refusal = (bytes: Uint8Array, max = MAX) => pixelRefusal(sniffImage(bytes), max);

const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24];

/** A simple lossy WebP (`VP8 `): the key frame's 14-bit width and height (RFC 9649 §2.5, RFC 6386 §9.1). */
function vp8(width: number, height: number): Uint8Array {
  const head = [...new TextEncoder().encode("RIFF"), ...le32(30), ...new TextEncoder().encode("WEBPVP8 ")];
  head.push(...le32(10), 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a);
  head.push(width & 255, (width >> 8) & 0x3f, height & 255, (height >> 8) & 0x3f);
  return new Uint8Array([...head, 0, 0]);
}

/** A simple lossless WebP (`VP8L`): signature 0x2f, then 14 bits of width − 1 and of height − 1 (RFC 9649 §3.2). */
function vp8l(width: number, height: number): Uint8Array {
  const bits = (width - 1) | ((height - 1) << 14);
  const head = [...new TextEncoder().encode("RIFF"), ...le32(26), ...new TextEncoder().encode("WEBPVP8L")];
  head.push(...le32(5), 0x2f, ...le32(bits >>> 0));
  return new Uint8Array([...head, 0, 0]);
}

/** A GIF whose logical screen is `screen` and whose first image is `frame` at (left, top) (GIF89a §18, §20). */
function gif(screen: [number, number], frame: [number, number, number, number]): Uint8Array {
  const u16 = (n: number) => [n & 255, n >> 8];
  const [w, h] = screen;
  const [left, top, fw, fh] = frame;
  return new Uint8Array([
    ...new TextEncoder().encode("GIF89a"),
    ...u16(w),
    ...u16(h),
    0x80, // a global colour table of 2 entries
    0,
    0,
    0,
    0,
    0,
    255,
    255,
    255,
    ...[0x21, 0xf9, 4, 0, 0, 0, 0, 0], // a graphic control extension before the image
    0x2c,
    ...u16(left),
    ...u16(top),
    ...u16(fw),
    ...u16(fh),
    0,
    2,
    2,
    0x4c,
    0x01,
    0,
    0x3b,
  ]);
}

/** A JPEG whose SOF (of `marker`) comes after an APP1 segment of `padding` bytes (ITU T.81 §B.2.2). */
function jpeg(width: number, height: number, opts: { marker?: number; padding?: number } = {}): Uint8Array {
  const pad = opts.padding ?? 0;
  const app1 =
    pad > 0 ? [0xff, 0xe1, ((pad + 2) >> 8) & 255, (pad + 2) & 255, ...new Array(pad).fill(0)] : [];
  const sof = [0xff, opts.marker ?? 0xc0, 0, 11, 8, height >> 8, height & 255, width >> 8, width & 255];
  return new Uint8Array([0xff, 0xd8, ...app1, ...sof, 1, 1, 0x11, 0, 0xff, 0xd9]);
}

describe("the size a header declares, read without decoding", () => {
  test.each([
    ["png", sampleImage("png", { width: 12000, height: 12000 })],
    ["jpeg (baseline SOF0)", jpeg(12000, 12000)],
    ["jpeg (progressive SOF2, after 60 KB of EXIF)", jpeg(12000, 12000, { marker: 0xc2, padding: 60_000 })],
    ["gif (logical screen)", gif([12000, 12000], [0, 0, 1, 1])],
    ["webp (VP8X canvas)", sampleImage("webp", { width: 12000, height: 12000 })],
    ["webp (VP8 key frame)", vp8(12000, 12000)],
    ["webp (VP8L)", vp8l(12000, 12000)],
  ])("%s declaring 12000×12000 is refused with 400 VALIDATION_ERROR naming MEDIA_MAX_PIXELS", (_, bytes) => {
    const why = refusal(bytes);
    expect(why).toBeInstanceOf(AppError);
    expect(why?.code).toBe("VALIDATION_ERROR");
    expect(why?.message).toContain("12000×12000");
    expect(why?.message).toContain("MEDIA_MAX_PIXELS");
    expect(why?.details).toEqual([{ field: "file", message: expect.stringContaining("pixels") }]);
  });

  test.each([
    ["png", sampleImage("png", { width: 6000, height: 6000 })],
    ["jpeg", jpeg(6000, 6000, { marker: 0xc1, padding: 300 })],
    ["gif", gif([6000, 6000], [0, 0, 6000, 6000])],
    ["webp (VP8X)", sampleImage("webp", { width: 6000, height: 6000 })],
    ["webp (VP8)", vp8(6000, 6000)],
    ["webp (VP8L)", vp8l(6000, 6000)],
  ])("%s declaring 6000×6000 (36 M pixels) may be decoded", (_, bytes) => {
    expect(refusal(bytes)).toBeNull();
  });

  test("the limit is width × height: exactly MEDIA_MAX_PIXELS passes, one row more does not", () => {
    expect(refusal(sampleImage("png", { width: 1000, height: 40 }), 40_000)).toBeNull();
    expect(refusal(sampleImage("png", { width: 1000, height: 41 }), 40_000)?.code).toBe("VALIDATION_ERROR");
    // Neither side alone decides: a long thin strip over the count is refused.
    expect(refusal(sampleImage("png", { width: 400_000_000, height: 1 }))?.code).toBe("VALIDATION_ERROR");
  });

  test("a GIF whose first image is larger than its logical screen counts the image (decoders grow the screen to it)", () => {
    expect(refusal(gif([10, 10], [0, 0, 12000, 12000]))?.message).toContain("12000×12000");
    expect(refusal(gif([10, 10], [6000, 6000, 6000, 6000]))?.message).toContain("12000×12000");
    expect(refusal(gif([100, 100], [10, 10, 50, 50]))).toBeNull();
  });

  test("a header that declares no size (no SOF in the bytes read, a zero side) is refused: it cannot be bounded", () => {
    const noSof = new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, ...new Array(70_000).fill(0)]);
    expect(sniffImage(noSof)?.width).toBeNull();
    expect(refusal(noSof)?.message).toContain("does not declare");
    expect(refusal(sampleImage("png", { width: 0, height: 5 }))?.code).toBe("VALIDATION_ERROR");
    expect(refusal(jpeg(5000, 0))?.code).toBe("VALIDATION_ERROR");
  });

  test("a real 12000×12000 PNG (a deflated all-zero IDAT) is small on disk and refused from its IHDR", () => {
    const bomb = pixelBombPng(12000, 12000);
    expect(bomb.byteLength).toBeLessThan(100_000);
    expect(sniffImage(bomb)).toEqual({ contentType: "image/png", width: 12000, height: 12000 });
    expect(refusal(bomb)?.message).toContain("144000000 pixels");
  });
});
