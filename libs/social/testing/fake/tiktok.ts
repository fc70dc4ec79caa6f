/**
 * TikTok's Content Posting API on the fake: creator_info, video and photo init (PULL_FROM_URL from
 * verified prefixes, FILE_UPLOAD in chunks), the upload URL, publish status, and video/query.
 */
import {
  type FakeState,
  type Fetched,
  fetchMedia,
  hasScope,
  isExpired,
  json,
  metricsOf,
  nextSeq,
  type PlatformCall,
  PREFIX,
  typeOfBytes,
} from "./state.ts";

/** TikTok's privacy levels, as creator_info/query lists them. */
export const ALL_TIKTOK_PRIVACY = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
];

type TikTokPublish = {
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
type TikTokCtx = { s: FakeState; publishes: Map<string, TikTokPublish> };

/** TikTok's answers, stamped with one log id per request. */
type Answers = {
  logId: string;
  err: (status: number, code: string, message: string) => Response;
  ok: (data: unknown) => Response;
};

/** The TikTok handler (`parts` below /v2, the upload URL included). */
export function fakeTiktok(s: FakeState): (call: PlatformCall) => Promise<Response> {
  const ctx: TikTokCtx = { s, publishes: new Map() };
  return (call) => tiktok(ctx, call);
}

async function tiktok(ctx: TikTokCtx, c: PlatformCall): Promise<Response> {
  const { req, parts, token } = c;
  if (parts[0] === "tiktok-upload") return upload(ctx, req, parts);
  const logId = `2026${nextSeq(ctx.s)}`;
  const a: Answers = {
    logId,
    err: (status, code, message) => json(status, { data: {}, error: { code, message, log_id: logId } }),
    ok: (data) => json(200, { data, error: { code: "ok", message: "", log_id: logId } }),
  };
  if (isExpired(ctx.s, token))
    return a.err(401, "access_token_invalid", "The access token is invalid or not found in the request.");
  const path = parts.join("/");
  // Requests carry `Content-Type: application/json; charset=UTF-8`
  // (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post).
  if (req.method === "POST" && !(req.headers.get("content-type") ?? "").startsWith("application/json"))
    return a.err(400, "invalid_params", "Content-Type must be application/json; charset=UTF-8");
  const options = ctx.s.tiktokPrivacy.get(token) ?? [
    "PUBLIC_TO_EVERYONE",
    "MUTUAL_FOLLOW_FRIENDS",
    "SELF_ONLY",
  ];
  if (req.method === "POST" && path === "post/publish/creator_info/query")
    // https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info
    return a.ok({
      creator_avatar_url: "https://p16.example.invalid/a.jpeg",
      creator_username: `creator_${token.slice(-6)}`,
      creator_nickname: "Creator",
      privacy_level_options: options,
      comment_disabled: false,
      duet_disabled: false,
      stitch_disabled: true,
      max_video_post_duration_sec: 600,
    });
  if (req.method === "POST" && (path === "post/publish/content/init" || path === "post/publish/video/init"))
    return init(ctx, c, { a, options, video: path === "post/publish/video/init" });
  if (req.method === "POST" && path === "post/publish/status/fetch") return status(ctx, c, a);
  if (req.method === "POST" && path === "video/query") return videoQuery(ctx, c, a);
  return a.err(404, "invalid_params", "no such route");
}

/**
 * FILE_UPLOAD: the upload_url takes PUTs of the chunks in order with `Content-Range: bytes
 * first-last/total` and Content-Type video/mp4 (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#file_upload).
 */
async function upload(ctx: TikTokCtx, req: Request, parts: string[]): Promise<Response> {
  const p = ctx.publishes.get(decodeURIComponent(parts[1] ?? ""));
  if (req.method !== "PUT" || !p?.upload) return new Response(null, { status: 404 });
  const u = p.upload;
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers.get("content-range") ?? "");
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (!range || Number(range[3]) !== u.size || Number(range[1]) !== u.received)
    return new Response(null, { status: 416 });
  if (
    Number(range[2]) - Number(range[1]) + 1 !== bytes.byteLength ||
    !(req.headers.get("content-type") ?? "").startsWith("video/")
  )
    return new Response(null, { status: 400 });
  u.chunks.push(bytes);
  u.received += bytes.byteLength;
  return new Response(null, { status: u.received === u.size ? 201 : 206 });
}

async function init(
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

/**
 * https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status : PROCESSING_DOWNLOAD
 * while TikTok pulls the files, FAILED with fail_reason (photos: JPEG or WebP only,
 * `file_format_check_failed`), PUBLISH_COMPLETE with `publicaly_available_post_id` once public.
 */
async function status(ctx: TikTokCtx, c: PlatformCall, a: Answers): Promise<Response> {
  const b = (await c.req.json().catch(() => ({}))) as { publish_id?: string };
  const p = ctx.publishes.get(b.publish_id ?? "");
  if (!p || p.token !== c.token) return a.err(400, "invalid_publish_id", "publish_id does not exist");
  if (p.upload && p.upload.received < p.upload.size)
    return a.ok({ status: "PROCESSING_UPLOAD", uploaded_bytes: p.upload.received });
  if (!p.result && p.upload) {
    const all = Buffer.concat(p.upload.chunks);
    const type = typeOfBytes(all);
    p.result =
      type === "video/mp4"
        ? { media: [{ contentType: type, size: all.byteLength }] }
        : { fail: "video_format_check_failed" };
  }
  if (!p.result) p.result = await pullFiles(ctx.s, p);
  if (p.checksLeft > 0) {
    p.checksLeft--;
    return a.ok({ status: "PROCESSING_DOWNLOAD", uploaded_bytes: 0 });
  }
  if ("fail" in p.result) return a.ok({ status: "FAILED", fail_reason: p.result.fail });
  // Ids are int64 numbers in the JSON, 19 digits like TikTok's: beyond 2^53, so the raw text is
  // written here (JSON.parse of it yields a neighbouring number).
  if (!p.postId) {
    p.postId = `7${String(nextSeq(ctx.s)).padStart(18, "0")}`;
    ctx.s.published.set(p.postId, {
      platform: "tiktok",
      text: p.text,
      media: p.result.media,
      privacy: p.privacy,
    });
  }
  return new Response(
    `{"data":{"status":"PUBLISH_COMPLETE","publicaly_available_post_id":[${p.postId}]},"error":{"code":"ok","message":"","log_id":"${a.logId}"}}`,
    { status: 200, headers: { "content-type": "application/json" } },
  );
}

/** TikTok pulls a PULL_FROM_URL publish's files: videos MP4, photos JPEG or WebP (status page above). */
async function pullFiles(s: FakeState, p: TikTokPublish): Promise<{ media: Fetched[] } | { fail: string }> {
  const media: Fetched[] = [];
  let fail: string | null = null;
  for (const u of p.urls) {
    const got = await fetchMedia(s, u);
    if (typeof got === "string") fail = "picture_size_check_failed";
    else if (
      p.video ? got.contentType !== "video/mp4" : !["image/jpeg", "image/webp"].includes(got.contentType)
    )
      fail = p.video ? "video_format_check_failed" : "file_format_check_failed";
    else media.push(got);
    if (fail) break;
  }
  return fail ? { fail } : { media };
}

/**
 * https://developers.tiktok.com/doc/tiktok-api-v2-video-query : scope video.list, `fields` in the
 * query, `filters.video_ids` (up to 20) in the body; the counts of the user's own videos.
 */
async function videoQuery(ctx: TikTokCtx, c: PlatformCall, a: Answers): Promise<Response> {
  if (!hasScope(ctx.s, c.token, "video.list"))
    return a.err(
      401,
      "scope_not_authorized",
      "The user did not authorize the scope required for completing this request.",
    );
  const b = (await c.req.json().catch(() => ({}))) as { filters?: { video_ids?: string[] } };
  const ids = b.filters?.video_ids ?? [];
  if (ids.length < 1 || ids.length > 20)
    return a.err(400, "invalid_params", "filters.video_ids: 1 to 20 ids");
  const fields = (new URL(c.req.url).searchParams.get("fields") ?? "").split(",");
  const videos = ids
    .filter((id) => ctx.s.published.get(id)?.platform === "tiktok")
    .map((id) => {
      const m = metricsOf(ctx.s, id);
      const all: Record<string, unknown> = {
        id,
        view_count: m.views,
        like_count: m.likes,
        comment_count: m.comments,
        share_count: m.shares,
      };
      return Object.fromEntries(Object.entries(all).filter(([k]) => fields.includes(k)));
    });
  return a.ok({ videos, cursor: 0, has_more: false });
}
