import { AppError } from "@site/domain/core";

// Pixels before bytes (CONTRACT.md "Bounded: retries, replays, images", decision 1430): a decoder's
// memory grows with width × height (4 bytes a pixel in RGBA), not with the file's size, so the size an
// image's header declares (image_types.ts: PNG IHDR, JPEG SOFn, GIF logical screen and first image,
// WebP VP8X/VP8/VP8L) decides whether anything may decode it.

/** Width × height as a header declares them; null when it declares no size (or a zero side). */
export function declaredPixels(s: { width: number | null; height: number | null } | null): number | null {
  if (!s?.width || !s.height || s.width < 0 || s.height < 0) return null;
  return s.width * s.height;
}

/**
 * 400 VALIDATION_ERROR for an image whose header declares more than `maxPixels` (MEDIA_MAX_PIXELS) or no
 * size at all (it could not be bounded before decoding); null when it may be decoded.
 */
export function pixelRefusal(
  s: { width: number | null; height: number | null } | null,
  maxPixels: number,
  field = "file",
  /** Which file, when the field names several (a media id). */
  which?: string,
): AppError | null {
  const subject = which ? `${field}: ${which}` : field;
  const pixels = declaredPixels(s);
  if (pixels === null) {
    const why = "the image's header does not declare its width and height";
    return new AppError("VALIDATION_ERROR", `${subject}: ${why}; it cannot be checked before decoding`, [
      { field, message: "no declared size, so its pixels cannot be counted" },
    ]);
  }
  if (pixels <= maxPixels) return null;
  return new AppError(
    "VALIDATION_ERROR",
    `${subject}: ${s!.width}×${s!.height} is ${pixels} pixels, over the ${maxPixels} an image may have (MEDIA_MAX_PIXELS)`,
    [{ field, message: `more than ${maxPixels} pixels` }],
  );
}
