import { describe, expect, test } from "bun:test";
import { sampleImage } from "./media_samples.ts";
import { sniffImage } from "./media_types.ts";

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
