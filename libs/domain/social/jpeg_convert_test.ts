import { describe, expect, test } from "bun:test";
import { loadImage } from "@napi-rs/canvas";
import { pixelBombPng } from "@site/domain/testing";
import { ConvertError, convertMemoryBytes, convertToJpeg } from "./jpeg_convert.ts";

// The JPEG conversion decodes in a child process under RLIMIT_DATA (issue 38): the header check comes
// first (pixelRefusal), and this limit stands behind it for what the header does not tell.

describe("JPEG conversion in a memory-limited child process", () => {
  test("a PNG within the limit becomes a JPEG of its size, read back by Skia", async () => {
    const out = await convertToJpeg(pixelBombPng(640, 480), { memoryBytes: convertMemoryBytes(40_000_000) });
    expect([out.width, out.height]).toEqual([640, 480]);
    expect([...out.jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const back = await loadImage(Buffer.from(out.jpeg));
    expect([back.width, back.height]).toEqual([640, 480]);
  });

  test("the largest images MEDIA_MAX_PIXELS allows by default (40 M pixels, square and a long strip) convert under its limit", async () => {
    for (const [w, h] of [
      [6324, 6324],
      [40000, 1000],
    ] as const) {
      const out = await convertToJpeg(pixelBombPng(w, h), { memoryBytes: convertMemoryBytes(40_000_000) });
      expect([out.width, out.height]).toEqual([w, h]);
    }
  });

  test("a 12000×12000 PNG given to the child anyway: the child fails under its limit, the API's memory does not move", async () => {
    const before = process.memoryUsage().rss;
    const failed = await convertToJpeg(pixelBombPng(12000, 12000), { memoryBytes: 300 * 1024 * 1024 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(ConvertError);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  test("bytes that are no image: ConvertError with the decoder's words", async () => {
    const failed = await convertToJpeg(new Uint8Array([1, 2, 3, 4]), {
      memoryBytes: convertMemoryBytes(1e6),
    }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ConvertError);
    expect((failed as Error).message.length).toBeGreaterThan(0);
  });

  test("a child past its time is killed: ConvertError", async () => {
    const failed = await convertToJpeg(pixelBombPng(4000, 4000), {
      memoryBytes: convertMemoryBytes(40_000_000),
      timeoutMs: 1,
    }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ConvertError);
  });
});
