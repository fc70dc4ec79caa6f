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
  tooShort,
  typeOfBytes,
} from "./state.ts";
import { type Answers, initPost, type TikTokCtx, type TikTokPublish } from "./tiktok_init.ts";

/** TikTok's privacy levels, as creator_info/query lists them. */
export const ALL_TIKTOK_PRIVACY = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
];

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
    return initPost(ctx, c, { a, options, video: path === "post/publish/video/init" });
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

/**
 * https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status : PROCESSING_DOWNLOAD
 * while TikTok pulls the files, FAILED with fail_reason (photos: JPEG or WebP only,
 * `file_format_check_failed`), PUBLISH_COMPLETE with `publicaly_available_post_id` once public (none
 * for a private post).
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
    // A video under 3 s fails once TikTok processed it (`duration_check_failed`,
    // https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status).
    p.result =
      type !== "video/mp4"
        ? { fail: "video_format_check_failed" }
        : tooShort(all, 3)
          ? { fail: "duration_check_failed" }
          : { media: [{ contentType: type, size: all.byteLength }] };
  }
  if (!p.result) p.result = await pullFiles(ctx.s, p);
  if (p.checksLeft > 0) {
    p.checksLeft--;
    return a.ok({ status: "PROCESSING_DOWNLOAD", uploaded_bytes: 0 });
  }
  if ("fail" in p.result) return a.ok({ status: "FAILED", fail_reason: p.result.fail });
  // A private (SELF_ONLY) post is complete without a public id: "developers are not provided with the
  // post_id until [moderation] is complete", and only posts "created for public viewership" go through
  // it (https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status). The fake
  // records it under the publish id the client holds.
  if (p.privacy === "SELF_ONLY") {
    ctx.s.published.set(`publish:${b.publish_id}`, {
      platform: "tiktok",
      text: p.text,
      media: p.result.media,
      privacy: p.privacy,
    });
    return a.ok({ status: "PUBLISH_COMPLETE" });
  }
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
    const got = await fetchMedia(s, u, p.video ? (b) => tooShort(b, 3) : undefined);
    if (typeof got === "string")
      fail = got.includes("minimum") ? "duration_check_failed" : "picture_size_check_failed";
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
