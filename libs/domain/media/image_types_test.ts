import { describe, expect, test } from "bun:test";
import { loadImage } from "@napi-rs/canvas";
import { FOREIGN_WEBP, sampleImage } from "@site/domain/testing";
import { sniffImage } from "./image_types.ts";

describe("the type of a file is decided by its magic bytes", () => {
  test.each([
    ["png", "image/png"],
    ["jpeg", "image/jpeg"],
    ["gif", "image/gif"],
    ["webp", "image/webp"],
  ] as const)("%s is recognized with its width and height", (kind, type) => {
    expect(sniffImage(sampleImage(kind, { width: 640, height: 480, size: 2000 }))).toEqual({
      contentType: type,
      width: 640,
      height: 480,
    });
  });

  test.each(["svg", "html"] as const)("%s is refused", (kind) => {
    expect(sniffImage(sampleImage(kind))).toBeNull();
  });

  test("an empty or truncated file is refused", () => {
    expect(sniffImage(new Uint8Array(0))).toBeNull();
    expect(sniffImage(sampleImage("png").slice(0, 10))).toBeNull();
  });
});

describe("WebP sizes agree with a decoder that is not ours", () => {
  test.each(Object.entries(FOREIGN_WEBP))(
    "%s WebP from libwebp: the sniffed size is Skia's and the one it was made at",
    async (form, sample) => {
      const bytes = Buffer.from(sample.base64, "base64");
      const chunk = { lossy: "VP8 ", lossless: "VP8L", extended: "VP8X" }[form];
      expect(bytes.toString("latin1", 12, 16)).toBe(chunk!);
      const decoded = await loadImage(bytes);
      expect([decoded.width, decoded.height]).toEqual([sample.width, sample.height]);
      expect(sniffImage(bytes)).toEqual({
        contentType: "image/webp",
        width: decoded.width,
        height: decoded.height,
      });
    },
  );
});
