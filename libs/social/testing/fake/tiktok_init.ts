/**
 * TikTok's post init on the fake: video (PULL_FROM_URL or FILE_UPLOAD) and photo posts, the creator's
 * privacy levels and the app's audit, and URLs only from verified prefixes.
 */
import { type FakeState, type Fetched, nextSeq, type PlatformCall, PREFIX } from "./state.ts";

/** A publish TikTok is making: its files (pulled or uploaded), text, privacy and progress. */
export type TikTokPublish = {
  /** FILE_UPLOAD: the bytes PUT so far and how many are declared; null for PULL_FROM_URL. */
  upload: { chunks: Uint8Array[]; size: number; chunkSize: number; count: number; received: number } | null;
  token: string;
  text: string;
  privacy: string;
  urls: string[];
  video: boolean;
  checksLeft: number;
  result: { media: Fetched[] } | { fail: string } | null;
  postId: string | null;
};

/** The body of a video or photo init. */
type InitBody = {
  post_info?: { title?: string; description?: string; privacy_level?: string };
  source_info?: {
    source?: string;
    photo_images?: unknown;
    photo_cover_index?: number;
    video_url?: string;
  };
  post_mode?: string;
  media_type?: string;
};

/** The shared state and the publishes made (by publish_id). */
export type TikTokCtx = { s: FakeState; publishes: Map<string, TikTokPublish> };

/** TikTok's answers, stamped with one log id per request. */
export type Answers = {
  logId: string;
  err: (status: number, code: string, message: string) => Response;
  ok: (data: unknown) => Response;
};

/** post/publish/video/init and post/publish/content/init (photos). */
export async function initPost(
  ctx: TikTokCtx,
  c: PlatformCall,
  o: { a: Answers; options: string[]; video: boolean },
): Promise<Response> {
  const { a, options, video } = o;
  const b = (await c.req.json().catch(() => ({}))) as InitBody;
  const privacy = b.post_info?.privacy_level ?? "";
  // privacy_level must be one of the creator's privacy_level_options (creator_info/query); else
  // `privacy_level_option_mismatch` (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post#error_codes).
  if (!options.includes(privacy))
    return a.err(
      400,
      "privacy_level_option_mismatch",
      `privacy_level ${privacy || "(none)"} is not one the creator allows`,
    );
  // An app TikTok has not audited may only post privately: "all content posted by unaudited clients
  // will be restricted to private viewing mode"; another level is refused with
  // unaudited_client_can_only_post_to_private_accounts
  // (https://developers.tiktok.com/doc/content-posting-api-get-started#step_3,
  // https://developers.tiktok.com/doc/content-posting-api-reference-direct-post#error_codes).
  if (!ctx.s.app.tiktokAudited && privacy !== "SELF_ONLY")
    return a.err(
      403,
      "unaudited_client_can_only_post_to_private_accounts",
      "Please review our integration guidelines at https://developers.tiktok.com/doc/content-sharing-guidelines/",
    );
  if (b.source_info?.source !== "PULL_FROM_URL" && b.source_info?.source !== "FILE_UPLOAD")
    return a.err(400, "invalid_params", "source_info.source must be PULL_FROM_URL or FILE_UPLOAD");
  const source =
    video && b.source_info.source === "FILE_UPLOAD"
      ? fileUploadSource(b, a)
      : video
        ? videoUrlSource(b, a)
        : photoSource(b, a);
  if (source instanceof Response) return source;
  // PULL_FROM_URL only from a domain or URL prefix the developer verified
  // (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#pull_from_url):
  // anything else is `url_ownership_unverified`.
  const unverified = source.urls.find((u) => !ctx.s.tiktokVerified.some((p) => u.startsWith(p)));
  if (unverified)
    return a.err(
      403,
      "url_ownership_unverified",
      `the URL prefix of ${unverified} is not verified for this app`,
    );
  const publishId = `p_pub_url~v2.${nextSeq(ctx.s)}`;
  ctx.publishes.set(publishId, {
    upload: source.upload,
    token: c.token,
    text: b.post_info?.description ?? b.post_info?.title ?? "",
    privacy,
    urls: source.urls,
    video,
    checksLeft: ctx.s.processingChecks,
    result: null,
    postId: null,
  });
  const origin = new URL(c.req.url).origin;
  return a.ok({
    publish_id: publishId,
    ...(source.upload
      ? { upload_url: `${origin}${PREFIX.tiktok}/tiktok-upload/${encodeURIComponent(publishId)}` }
      : {}),
  });
}

/** Where an init's files come from: the URLs TikTok pulls, or the upload it awaits. */
type Source = { urls: string[]; upload: TikTokPublish["upload"] };

/**
 * FILE_UPLOAD: video_size, chunk_size and total_chunk_count; a video of at most 64 MB may go
 * whole (chunk_size = video_size), else chunks of 5–64 MB, total_chunk_count =
 * floor(video_size / chunk_size) (media transfer guide, "Chunk restrictions").
 */
function fileUploadSource(b: InitBody, a: Answers): Source | Response {
  const si = b.source_info as { video_size?: number; chunk_size?: number; total_chunk_count?: number };
  const size = Number(si.video_size);
  const chunk = Number(si.chunk_size);
  const count = Number(si.total_chunk_count);
  const MB = 1024 * 1024;
  const whole = chunk === size && count === 1 && size <= 64 * MB;
  const chunked = chunk >= 5 * MB && chunk <= 64 * MB && count === Math.floor(size / chunk);
  if (!Number.isSafeInteger(size) || size < 1 || !(whole || chunked))
    return a.err(400, "invalid_params", "video_size, chunk_size and total_chunk_count do not agree");
  return { urls: [], upload: { chunks: [], size, chunkSize: chunk, count, received: 0 } };
}

/** Video direct post: source_info.video_url for PULL_FROM_URL; title at most 2200 characters. */
function videoUrlSource(b: InitBody, a: Answers): Source | Response {
  if (!b.source_info?.video_url) return a.err(400, "invalid_params", "source_info.video_url is required");
  if ((b.post_info?.title ?? "").length > 2200)
    return a.err(400, "invalid_params", "title over 2200 characters");
  return { urls: [b.source_info.video_url], upload: null };
}

/**
 * Photo post: media_type PHOTO, post_mode DIRECT_POST or MEDIA_UPLOAD, photo_images 1–35 URLs
 * (only PULL_FROM_URL), photo_cover_index within them, title ≤ 90, description ≤ 4000
 * (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post).
 */
function photoSource(b: InitBody, a: Answers): Source | Response {
  if (b.media_type !== "PHOTO") return a.err(400, "invalid_params", "media_type must be PHOTO");
  if (b.post_mode !== "DIRECT_POST" && b.post_mode !== "MEDIA_UPLOAD")
    return a.err(400, "invalid_params", "post_mode must be DIRECT_POST or MEDIA_UPLOAD");
  if (b.source_info?.source !== "PULL_FROM_URL")
    return a.err(400, "invalid_params", "photos are only pulled from URLs (PULL_FROM_URL)");
  const images = b.source_info.photo_images;
  if (
    !Array.isArray(images) ||
    images.length < 1 ||
    images.length > 35 ||
    images.some((u) => typeof u !== "string")
  )
    return a.err(400, "invalid_params", "photo_images must list 1 to 35 URLs");
  const cover = b.source_info.photo_cover_index ?? -1;
  if (!Number.isInteger(cover) || cover < 0 || cover >= images.length)
    return a.err(400, "invalid_params", "photo_cover_index must index photo_images");
  if ((b.post_info?.title ?? "").length > 90) return a.err(400, "invalid_params", "title over 90 characters");
  if ((b.post_info?.description ?? "").length > 4000)
    return a.err(400, "invalid_params", "description over 4000 characters");
  return { urls: images as string[], upload: null };
}
