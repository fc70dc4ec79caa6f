import type { SocialPlatform } from "./platform.ts";

/** What the per-platform rules look at in a post's media. */
export type MediaShape = { kind: "image" | "video"; contentType: string };

/** Each platform's media rules as its publishing reference states them (the adapters obey the same). */
export const PLATFORM_MEDIA_RULES = {
  // https://developers.facebook.com/docs/instagram-platform/content-publishing/ : a single image or
  // video (published as a reel), or a carousel of up to 10 images and videos; images JPEG only
  // (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#image-specifications).
  instagram: {
    textOnly: false,
    maxImages: 10,
    carousel: { min: 2, max: 10 },
    imageTypes: ["image/jpeg"],
    video: true,
    mixed: true,
  },
  // https://developers.facebook.com/docs/threads/posts : TEXT, one IMAGE or VIDEO, or a CAROUSEL of 2–20;
  // images JPEG or PNG (Media Specifications on the same page).
  threads: {
    textOnly: true,
    maxImages: 20,
    carousel: { min: 2, max: 20 },
    imageTypes: ["image/jpeg", "image/png"],
    video: true,
    mixed: true,
  },
  // https://docs.x.com/x-api/media/quickstart/best-practices : up to 4 photos, or one GIF or video.
  x: {
    textOnly: true,
    maxImages: 4,
    carousel: null,
    imageTypes: ["image/jpeg", "image/png", "image/webp", "image/gif"],
    video: true,
    mixed: false,
  },
  // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api :
  // JPG, PNG, GIF images; a post carries one image or a multiImage of 2–20; or one video (MP4) through the
  // Videos API (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api),
  // alone (the post's `content.media` is one video).
  linkedin: {
    textOnly: true,
    maxImages: 20,
    carousel: null,
    imageTypes: ["image/jpeg", "image/png", "image/gif"],
    video: true,
    mixed: false,
  },
  // https://www.reddit.com/dev/api/#POST_api_submit : kind self (text), image (one uploaded image) or
  // video (one uploaded video with its poster image, PRAW's `submit_video`,
  // https://github.com/praw-dev/praw/blob/main/praw/models/reddit/subreddit.py).
  reddit: {
    textOnly: true,
    maxImages: 1,
    carousel: null,
    imageTypes: ["image/jpeg", "image/png", "image/gif"],
    video: true,
    mixed: false,
  },
  // https://developers.tiktok.com/doc/content-posting-api-reference-photo-post : 1–35 photos, JPEG or
  // WebP; or one video (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post).
  tiktok: {
    textOnly: false,
    maxImages: 35,
    carousel: null,
    imageTypes: ["image/jpeg", "image/webp"],
    video: true,
    mixed: false,
  },
} as const satisfies Record<
  SocialPlatform,
  {
    textOnly: boolean;
    maxImages: number;
    carousel: { min: number; max: number } | null;
    imageTypes: readonly string[];
    video: boolean;
    mixed: boolean;
  }
>;

/** Still-image types converted to JPEG for a platform that takes JPEG but not them (decision 1003). */
const CONVERTIBLE = ["image/png", "image/webp"];

/**
 * The type a file is published as on `platform`: its own, or JPEG when the platform does not take its
 * type but takes JPEG and it is a still image (PNG, WebP) the service converts.
 */
export function publishedTypeOn(platform: SocialPlatform, contentType: string): string {
  const accepted = PLATFORM_MEDIA_RULES[platform].imageTypes as readonly string[];
  if (
    accepted.includes(contentType) ||
    !CONVERTIBLE.includes(contentType) ||
    !accepted.includes("image/jpeg")
  )
    return contentType;
  return "image/jpeg";
}

/**
 * The rule of `platform` a post with `media` breaks, in words naming the platform; null when it may be
 * published there. Checked for every target before anything is published. With `convert`, still images
 * the service converts to JPEG for the platform count as JPEG.
 */
export function platformMediaViolation(
  platform: SocialPlatform,
  given: MediaShape[],
  opts: { convert?: boolean } = {},
): string | null {
  const media = opts.convert
    ? given.map((m) =>
        m.kind === "image" ? { ...m, contentType: publishedTypeOn(platform, m.contentType) } : m,
      )
    : given;
  const r = PLATFORM_MEDIA_RULES[platform];
  const images = media.filter((m) => m.kind === "image");
  const videos = media.filter((m) => m.kind === "video");
  if (media.length === 0) return r.textOnly ? null : `${platform} needs at least one image or video`;
  if (videos.length > 0 && !r.video) return `${platform} accepts no video`;
  const bad = images.find((m) => !(r.imageTypes as readonly string[]).includes(m.contentType));
  if (bad)
    return `${platform} accepts images of type ${r.imageTypes.join(", ")} only, not ${bad.contentType}`;
  if (videos.length > 0 && videos.length + images.length > 1 && !r.mixed)
    return `${platform} takes one video alone, not with other media`;
  // X: "up to 4 photos, 1 animated GIF or 1 video" (https://docs.x.com/x-api/media/quickstart/best-practices).
  if (platform === "x" && media.length > 1 && images.some((m) => m.contentType === "image/gif"))
    return "x takes one GIF alone, not with other media";
  if (media.length === 1) return null;
  if (r.carousel) {
    if (media.length > r.carousel.max)
      return `${platform} takes at most ${r.carousel.max} items in a carousel, not ${media.length}`;
    return null;
  }
  if (images.length > r.maxImages)
    return `${platform} takes at most ${r.maxImages} image${r.maxImages === 1 ? "" : "s"}, not ${images.length}`;
  return null;
}
