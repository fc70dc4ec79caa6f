import { AppError } from "@site/domain/core";
import { type Mp4Facts, readMp4 } from "@site/domain/media";
import type { SocialPlatform } from "./platform.ts";

/** One platform's documented video rules; a bound left out is not stated by the platform. */
export type VideoRules = {
  /** The reference page the numbers come from. */
  reference: string;
  durationS: { min: number; max: number };
  /** Each side at least this (px). */
  minSide?: number;
  /** The width (columns) at most this (px). */
  maxWidth?: number;
  /** Width and height at most these (px). */
  maxSize?: { width: number; height: number };
  /** Either orientation within these (px, landscape; its transpose for portrait). */
  maxBox?: { long: number; short: number };
  /** Width / height. */
  aspect: { min: number; max: number };
  fps: { min: number; max: number };
  bytes: { min?: number; max: number };
};

const MB = 1024 * 1024;

/** Each platform's video rules as its reference states them (issue 33, decision 1492). */
export const PLATFORM_VIDEO_RULES: Record<SocialPlatform, VideoRules> = {
  // Reels: "Duration: 15 mins max, 3 seconds min", "Frame rate: 23-60 FPS", "Maximum columns
  // (horizontal pixels): 1920", aspect ratio 0.01:1 to 10:1, "File size: 300MB max".
  instagram: {
    reference:
      "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reel-specifications",
    durationS: { min: 3, max: 15 * 60 },
    maxWidth: 1920,
    aspect: { min: 0.01, max: 10 },
    fps: { min: 23, max: 60 },
    bytes: { max: 300 * MB },
  },
  // Threads video: "Duration: 300 seconds (5 minutes) maximum", 23-60 FPS, "Maximum columns: 1920",
  // aspect ratio 0.01:1 to 10:1, "File size: 1 GB maximum".
  threads: {
    reference: "https://developers.facebook.com/docs/threads/overview#video-specifications",
    durationS: { min: 0, max: 300 },
    maxWidth: 1920,
    aspect: { min: 0.01, max: 10 },
    fps: { min: 23, max: 60 },
    bytes: { max: 1024 * MB },
  },
  // X: duration 0.5 to 140 s, at least 32x32, aspect ratio 1:3 to 3:1, 60 FPS or less, 512 MB; the
  // asynchronous (tweet_video) upload takes up to 1920x1200 or 1200x1920.
  x: {
    reference: "https://docs.x.com/x-api/media/quickstart/best-practices",
    durationS: { min: 0.5, max: 140 },
    minSide: 32,
    maxBox: { long: 1920, short: 1200 },
    aspect: { min: 1 / 3, max: 3 },
    fps: { min: 0, max: 60 },
    bytes: { max: 512 * MB },
  },
  // LinkedIn Videos API: "Length: 3 seconds to 30 minutes", "File size: 75 KB to 500 MB", "Frame rate:
  // 10–60 fps", "Resolution: 256x144 to 4096x2304", "Aspect ratio: 1:2.4 to 2.4:1".
  linkedin: {
    reference:
      "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api#video-specifications",
    durationS: { min: 3, max: 30 * 60 },
    minSide: 144,
    maxBox: { long: 4096, short: 2304 },
    aspect: { min: 1 / 2.4, max: 2.4 },
    fps: { min: 10, max: 60 },
    bytes: { min: 75 * 1024, max: 500 * MB },
  },
  // Reddit: videos up to 15 minutes and 1 GB (Reddit Help, "Uploading videos"); no other bound stated.
  reddit: {
    reference: "https://support.reddithelp.com/hc/en-us/articles/360043033952-Formatting-your-videos",
    durationS: { min: 0, max: 15 * 60 },
    aspect: { min: 0, max: Number.POSITIVE_INFINITY },
    fps: { min: 0, max: Number.POSITIVE_INFINITY },
    bytes: { max: 1024 * MB },
  },
  // TikTok: "Frame rate: 23 - 60 FPS", "Picture size: the minimum is 360 pixels for both height and
  // width, the maximum is 4096 pixels", up to 10 minutes (the creator's max_video_post_duration_sec
  // may be less), at most 4 GB; at least 3 seconds, as TikTok's app requires.
  tiktok: {
    reference:
      "https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#video_restrictions",
    durationS: { min: 3, max: 10 * 60 },
    minSide: 360,
    maxSize: { width: 4096, height: 4096 },
    aspect: { min: 0, max: Number.POSITIVE_INFINITY },
    fps: { min: 23, max: 60 },
    bytes: { max: 4096 * MB },
  },
};

/** The video rule a file breaks on one platform: which rule, in words naming the platform. */
export type VideoViolation = {
  field: string;
  platform: SocialPlatform;
  rule: "duration" | "dimensions" | "aspect_ratio" | "frame_rate" | "size";
  message: string;
  reference: string;
};

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** The rules of `platform` that a video of `facts` and `size` bytes breaks (empty: it may go there). */
export function videoRuleViolations(
  platform: SocialPlatform,
  facts: Pick<Mp4Facts, "durationS" | "width" | "height" | "fps">,
  size: number,
): VideoViolation[] {
  const r = PLATFORM_VIDEO_RULES[platform];
  const out: VideoViolation[] = [];
  const add = (rule: VideoViolation["rule"], message: string) =>
    out.push({
      field: `media (${platform})`,
      platform,
      rule,
      message: `${platform}: ${message}`,
      reference: r.reference,
    });
  const { durationS: d, width: w, height: h, fps } = facts;
  if (d < r.durationS.min || d > r.durationS.max)
    add("duration", `a video must last ${r.durationS.min} to ${r.durationS.max} s, not ${round(d)} s`);
  const long = Math.max(w, h);
  const short = Math.min(w, h);
  if (
    (r.minSide !== undefined && short < r.minSide) ||
    (r.maxWidth !== undefined && w > r.maxWidth) ||
    (r.maxSize && (w > r.maxSize.width || h > r.maxSize.height)) ||
    (r.maxBox && (long > r.maxBox.long || short > r.maxBox.short))
  ) {
    const bounds = [
      r.minSide !== undefined ? `each side at least ${r.minSide} px` : null,
      r.maxWidth !== undefined ? `at most ${r.maxWidth} px wide` : null,
      r.maxSize ? `at most ${r.maxSize.width}x${r.maxSize.height} px` : null,
      r.maxBox ? `within ${r.maxBox.long}x${r.maxBox.short} px (either orientation)` : null,
    ].filter(Boolean);
    add("dimensions", `a video must be ${bounds.join(", ")}, not ${w}x${h}`);
  }
  const aspect = h > 0 ? w / h : 0;
  if (aspect < r.aspect.min || aspect > r.aspect.max)
    add(
      "aspect_ratio",
      `a video's aspect ratio (width:height) must be ${ratio(r.aspect.min)} to ${ratio(r.aspect.max)}, not ${round(aspect, 3)}:1`,
    );
  if (fps < r.fps.min - 0.01 || fps > r.fps.max + 0.01)
    add("frame_rate", `a video's frame rate must be ${r.fps.min} to ${r.fps.max} fps, not ${round(fps)}`);
  if ((r.bytes.min !== undefined && size < r.bytes.min) || size > r.bytes.max)
    add(
      "size",
      `a video must be ${r.bytes.min !== undefined ? `${r.bytes.min} bytes to ` : "at most "}${r.bytes.max} bytes, not ${size}`,
    );
  return out;
}

function ratio(x: number): string {
  return x >= 1 ? `${round(x, 3)}:1` : `1:${round(1 / x, 3)}`;
}

/** A video of a post as the check needs it: its id, size and bytes on demand. */
export type CheckedVideo = {
  id?: string;
  kind: "image" | "video";
  size: number;
  read(): Promise<Uint8Array>;
};

/**
 * Every video rule that the post's videos break on any of `platforms`, checked before any upload (at
 * creation, and again at publish time by whoever publishes). Each video is read once and its MP4 boxes
 * are read (readMp4); bytes that are not a readable MP4 are left to the platform to judge (decision
 * 1492). Empty when every target may take every video.
 */
export async function postVideoViolations(
  platforms: SocialPlatform[],
  media: CheckedVideo[],
): Promise<VideoViolation[]> {
  const out: VideoViolation[] = [];
  for (const m of media) {
    if (m.kind !== "video") continue;
    const facts = readMp4(await m.read());
    if (!facts) continue;
    for (const p of platforms) out.push(...videoRuleViolations(p, facts, m.size));
  }
  return out;
}

/**
 * Throws 400 VALIDATION_ERROR whose `details` name each platform and rule a post's videos break
 * (postVideoViolations); nothing is published or uploaded.
 */
export async function assertPostVideos(platforms: SocialPlatform[], media: CheckedVideo[]): Promise<void> {
  const broken = await postVideoViolations(platforms, media);
  if (broken.length > 0)
    throw new AppError(
      "VALIDATION_ERROR",
      `media: ${broken.map((b) => b.message).join("; ")}; nothing was published`,
      broken,
    );
}
