/** Sample files with real magic bytes and dimensions, padded to `size`: for tests and benchmarks. */
export function sampleImage(
  kind: "png" | "jpeg" | "gif" | "webp" | "svg" | "html",
  opts: { width?: number; height?: number; size?: number } = {},
): Uint8Array<ArrayBuffer> {
  const w = opts.width ?? 3;
  const h = opts.height ?? 2;
  let head: number[];
  switch (kind) {
    case "png":
      head = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52];
      head.push(
        w >>> 24,
        (w >>> 16) & 255,
        (w >>> 8) & 255,
        w & 255,
        h >>> 24,
        (h >>> 16) & 255,
        (h >>> 8) & 255,
        h & 255,
      );
      head.push(8, 6, 0, 0, 0, 0, 0, 0, 0);
      break;
    case "jpeg":
      head = [0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
      head.push(
        0xff,
        0xc0,
        0,
        17,
        8,
        h >> 8,
        h & 255,
        w >> 8,
        w & 255,
        3,
        1,
        0x22,
        0,
        2,
        0x11,
        1,
        3,
        0x11,
        1,
      );
      break;
    case "gif":
      head = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, w & 255, w >> 8, h & 255, h >> 8, 0, 0, 0];
      break;
    case "webp":
      head = [
        0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x58, 10, 0, 0, 0,
      ];
      head.push(
        0,
        0,
        0,
        0,
        (w - 1) & 255,
        ((w - 1) >> 8) & 255,
        (w - 1) >> 16,
        (h - 1) & 255,
        ((h - 1) >> 8) & 255,
        (h - 1) >> 16,
      );
      break;
    case "svg":
      head = [
        ...new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'),
      ];
      break;
    case "html":
      head = [...new TextEncoder().encode("<!doctype html><html><body>not an image</body></html>")];
      break;
  }
  const out = new Uint8Array(Math.max(opts.size ?? 0, head.length));
  out.set(head);
  return out;
}

/** A sample MP4: an `ftyp` box (isom brand) then zero padding to `size`. */
export function sampleVideo(size = 64): Uint8Array<ArrayBuffer> {
  const head = [0, 0, 0, 0x18, ...new TextEncoder().encode("ftypisom"), 0, 0, 2, 0];
  head.push(...new TextEncoder().encode("isommp41"));
  const out = new Uint8Array(Math.max(size, head.length));
  out.set(head);
  return out;
}
