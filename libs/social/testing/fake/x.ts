/**
 * X API v2 on the fake: the token's user, one-shot image upload, chunked video/GIF upload with its
 * status, posts with 1–4 media, and a post's public metrics (refused to free-tier apps).
 */
import { xTextLength } from "@site/domain/social";
import {
  type FakeState,
  type Fetched,
  isExpired,
  json,
  metricsOf,
  nextSeq,
  now,
  type PlatformCall,
  typeOfBytes,
} from "./state.ts";

type XMedia = {
  owner: string;
  contentType: string;
  size: number;
  total: number;
  chunks: Uint8Array[];
  state: "uploading" | "processing" | "succeeded" | "failed";
  checksLeft: number;
  /** When processing ends (fake clock, ms); 0: by status checks only (`checksLeft`). */
  readyAt: number;
};

/** The shared state and the media uploaded to X (with the category each chunked upload declared). */
type XCtx = { s: FakeState; media: Map<string, XMedia>; category: Map<string, string> };

/** The X API v2 handler (`parts` below /2). */
export function fakeX(s: FakeState): (call: PlatformCall) => Promise<Response> {
  const ctx: XCtx = { s, media: new Map(), category: new Map() };
  return (call) => x(ctx, call);
}

function xProblem(status: number, title: string, detail: string): Response {
  return json(status, { title, detail, type: "https://api.x.com/2/problems/invalid-request", status });
}

function unauthorized(): Response {
  return json(401, { title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" });
}

async function bodyOf(req: Request): Promise<Record<string, unknown>> {
  return ((await req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
}

async function x(ctx: XCtx, c: PlatformCall): Promise<Response> {
  const { req, url, parts, token } = c;
  if (isExpired(ctx.s, token)) return unauthorized();
  const path = parts.join("/");
  if (req.method === "GET" && path === "users/me") {
    // https://docs.x.com/x-api/users/get-my-user : the token's user.
    const who = ctx.s.issued.get(token);
    if (!who) return unauthorized();
    return json(200, { data: { id: who.user, name: "Fake User", username: `fake_${who.user}` } });
  }
  if (req.method === "POST" && path === "media/upload") return uploadImage(ctx, c);
  if (req.method === "POST" && path === "media/upload/initialize") return initializeUpload(ctx, c);
  const chunked = /^media\/upload\/(\d+)\/(append|finalize)$/.exec(path);
  if (req.method === "POST" && chunked) {
    const m = ctx.media.get(chunked[1]!);
    if (!m || m.owner !== token) return xProblem(400, "Invalid Request", "unknown media id");
    if (chunked[2] === "append") return appendUpload(m, req);
    return finalizeUpload(ctx, m, chunked[1]!);
  }
  if (req.method === "GET" && path === "media/upload" && url.searchParams.get("command") === "STATUS")
    return uploadStatus(ctx, c);
  if (req.method === "POST" && path === "tweets") return createPost(ctx, c);
  if (req.method === "GET" && parts[0] === "tweets" && parts[1]) return readPost(ctx, c, parts[1]);
  if (req.method === "GET" && parts[0] === "users" && parts[2] === "tweets" && parts[1])
    return userPosts(ctx, c, parts[1]);
  return json(404, {
    title: "Not Found Error",
    type: "https://api.twitter.com/2/problems/resource-not-found",
    detail: "no such route",
  });
}

/**
 * One-shot image upload: `media` (base64 in a JSON body) and `media_category` are required; an
 * image is at most 5 MB (https://docs.x.com/x-api/media/upload-media,
 * https://docs.x.com/x-api/media/quickstart/best-practices).
 */
async function uploadImage(ctx: XCtx, c: PlatformCall): Promise<Response> {
  const b = await bodyOf(c.req);
  if (typeof b.media !== "string" || !b.media) return xProblem(400, "Invalid Request", "media is required");
  // The one-shot upload's media_type has no image/gif (https://docs.x.com/x-api/media/upload-media,
  // the XDK's MediaUploadRequestOneShot enum): GIFs take the chunked flow with tweet_gif.
  const ONE_SHOT_TYPES = ["image/jpeg", "image/bmp", "image/png", "image/webp", "image/pjpeg", "image/tiff"];
  if (b.media_type !== undefined && !ONE_SHOT_TYPES.includes(String(b.media_type)))
    return xProblem(400, "Invalid Request", `media_type must be one of ${ONE_SHOT_TYPES.join(", ")}`);
  if (!["tweet_image", "dm_image", "subtitles"].includes(String(b.media_category)))
    return xProblem(400, "Invalid Request", "media_category must be tweet_image, dm_image or subtitles");
  const bytes = new Uint8Array(Buffer.from(b.media, "base64"));
  const type = typeOfBytes(bytes);
  if (!type?.startsWith("image/") || type === "image/gif")
    return xProblem(400, "Invalid Request", "media is not a supported image");
  if (bytes.byteLength > 5 * 1024 * 1024) return xProblem(400, "Invalid Request", "image over 5 MB");
  const id = `${nextSeq(ctx.s)}${"0".repeat(12)}`;
  ctx.media.set(id, {
    owner: c.token,
    contentType: type,
    size: bytes.byteLength,
    total: bytes.byteLength,
    chunks: [],
    state: "succeeded",
    checksLeft: 0,
    readyAt: 0,
  });
  return json(200, {
    data: { id, media_key: `3_${id}`, size: bytes.byteLength, expires_after_secs: 86400 },
  });
}

/**
 * Chunked upload: initialize with media_type and total_bytes, append segments, finalize, then
 * poll the status until `succeeded` (https://docs.x.com/x-api/media/initialize-media-upload).
 */
async function initializeUpload(ctx: XCtx, c: PlatformCall): Promise<Response> {
  const b = await bodyOf(c.req);
  const total = Number(b.total_bytes);
  if (!Number.isSafeInteger(total) || total < 1 || typeof b.media_type !== "string")
    return xProblem(400, "Invalid Request", "media_type and total_bytes are required");
  const category = String(b.media_category ?? "");
  if (!["tweet_video", "tweet_gif", "tweet_image", "amplify_video"].includes(category))
    return xProblem(400, "Invalid Request", "media_category is required (tweet_video, tweet_gif…)");
  const id = `${nextSeq(ctx.s)}${"1".repeat(12)}`;
  ctx.category.set(id, category);
  ctx.media.set(id, {
    owner: c.token,
    contentType: b.media_type,
    size: 0,
    total,
    chunks: [],
    state: "uploading",
    checksLeft: ctx.s.processingChecks,
    readyAt: 0,
  });
  return json(200, { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } });
}

/** https://docs.x.com/x-api/media/append-media-upload : `media` and `segment_index` in order. */
async function appendUpload(m: XMedia, req: Request): Promise<Response> {
  const b = await bodyOf(req);
  if (m.state !== "uploading") return xProblem(400, "Invalid Request", "upload already finalized");
  if (Number(b.segment_index) !== m.chunks.length)
    return xProblem(400, "Invalid Request", "segment_index out of order");
  // A segment is at most 5 MB (https://docs.x.com/x-api/media/append-media-upload): the base64
  // text sent is what is measured.
  if (String(b.media ?? "").length > 5_000_000)
    return xProblem(413, "Payload Too Large", "a segment is limited to 5 MB");
  const chunk = new Uint8Array(Buffer.from(String(b.media ?? ""), "base64"));
  m.chunks.push(chunk);
  m.size += chunk.byteLength;
  return new Response(null, { status: 204 });
}

/** https://docs.x.com/x-api/media/finalize-media-upload : the bytes sent must be total_bytes. */
function finalizeUpload(ctx: XCtx, m: XMedia, id: string): Response {
  if (m.size !== m.total)
    return xProblem(400, "Invalid Request", `${m.size} bytes sent, ${m.total} declared`);
  const all = Buffer.concat(m.chunks);
  // tweet_gif takes an animated GIF (up to 15 MB), tweet_video an MP4
  // (https://docs.x.com/x-api/media/quickstart/best-practices).
  const wanted = ctx.category.get(id) === "tweet_gif" ? "image/gif" : "video/mp4";
  m.state = typeOfBytes(all) === wanted && m.contentType === wanted ? "processing" : "failed";
  if (m.state === "processing" && ctx.s.xProcessingMs > 0) m.readyAt = now(ctx.s) + ctx.s.xProcessingMs;
  return json(200, {
    data: {
      id,
      media_key: `7_${id}`,
      size: m.size,
      processing_info: {
        state: m.state === "failed" ? "failed" : "pending",
        check_after_secs: checkAfterSecs(ctx, m),
      },
    },
  });
}

/**
 * `check_after_secs`: "the number of seconds to wait before checking the status again"
 * (https://docs.x.com/x-api/media/get-media-upload-status); here the processing time still left.
 */
function checkAfterSecs(ctx: XCtx, m: XMedia): number {
  return m.readyAt > 0 ? Math.max(1, Math.ceil((m.readyAt - now(ctx.s)) / 1000)) : 1;
}

/**
 * https://docs.x.com/x-api/media/get-media-upload-status : a video is processed for a time (a check
 * before `check_after_secs` finds it still in progress), or, in tests that count checks, for
 * `processingChecks` checks.
 */
function uploadStatus(ctx: XCtx, c: PlatformCall): Response {
  const id = c.url.searchParams.get("media_id") ?? "";
  const m = ctx.media.get(id);
  if (!m || m.owner !== c.token) return xProblem(400, "Invalid Request", "unknown media id");
  if (m.state === "processing") {
    if (m.readyAt > 0) {
      if (now(ctx.s) >= m.readyAt) m.state = "succeeded";
    } else if (m.checksLeft > 0) m.checksLeft--;
    else m.state = "succeeded";
  }
  const s = m.state === "processing" ? "in_progress" : m.state;
  return json(200, {
    data: {
      id,
      media_key: `7_${id}`,
      processing_info: { state: s, check_after_secs: checkAfterSecs(ctx, m) },
    },
  });
}

/**
 * POST /2/tweets: text or media is required; media.media_ids lists 1–4 uploaded media of this
 * user, at most one of them a video or GIF and then alone
 * (https://docs.x.com/x-api/posts/create-post, https://docs.x.com/x-api/media/quickstart/best-practices).
 */
async function createPost(ctx: XCtx, c: PlatformCall): Promise<Response> {
  const b = (await bodyOf(c.req)) as { text?: string; media?: { media_ids?: string[] } };
  const ids = b.media?.media_ids ?? [];
  if (!b.text && ids.length === 0) return xProblem(400, "Invalid Request", "text or media is required");
  // At most 280 weighted characters, a URL counting 23 (https://docs.x.com/fundamentals/counting-characters).
  if (b.text && xTextLength(b.text) > 280)
    return xProblem(400, "Invalid Request", "text: a post is limited to 280 weighted characters");
  if (b.media && (ids.length < 1 || ids.length > 4))
    return xProblem(400, "Invalid Request", "media.media_ids must list 1 to 4 ids");
  const media: Fetched[] = [];
  for (const id of ids) {
    const m = ctx.media.get(id);
    if (!m || m.owner !== c.token || m.state !== "succeeded")
      return xProblem(400, "Invalid Request", `Your media IDs are invalid: ${id}`);
    media.push({ contentType: m.contentType, size: m.size });
  }
  if (
    media.some((m) => m.contentType.startsWith("video/") || m.contentType === "image/gif") &&
    media.length > 1
  )
    return xProblem(400, "Invalid Request", "a video must be the only media of a post");
  const id = `18${String(nextSeq(ctx.s)).padStart(8, "0")}`;
  const owner = ctx.s.issued.get(c.token)?.user ?? c.token;
  ctx.s.published.set(id, { platform: "x", text: b.text ?? "", media, owner, at: now(ctx.s) });
  return json(201, { data: { id, text: b.text ?? "", edit_history_tweet_ids: [id] } });
}

/**
 * A user's posts, newest first (https://docs.x.com/x-api/users/get-posts): `start_time` (RFC 3339) the
 * oldest, `max_results` 5–100. A token the fake did not issue stands for the user it names.
 */
function userPosts(ctx: XCtx, c: PlatformCall, user: string): Response {
  const max = Number(c.url.searchParams.get("max_results") ?? "10");
  if (!Number.isInteger(max) || max < 5 || max > 100)
    return xProblem(400, "Invalid Request", "max_results must be between 5 and 100");
  const start = c.url.searchParams.get("start_time");
  const since = start ? Date.parse(start) : 0;
  if (Number.isNaN(since)) return xProblem(400, "Invalid Request", "start_time must be RFC 3339");
  const who = ctx.s.issued.get(c.token)?.user ?? c.token;
  const posts = [...ctx.s.published.entries()]
    .filter(([, p]) => p.platform === "x" && (p.owner === user || p.owner === who) && (p.at ?? 0) >= since)
    .reverse()
    .slice(0, max)
    .map(([id, p]) => ({
      id,
      text: p.text,
      created_at: new Date(p.at ?? 0).toISOString(),
      edit_history_tweet_ids: [id],
    }));
  return json(200, { data: posts, meta: { result_count: posts.length } });
}

function readPost(ctx: XCtx, c: PlatformCall, id: string): Response {
  if (ctx.s.xFreeTier.has(c.token))
    return json(403, {
      client_id: "29180401",
      detail:
        "When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from a Twitter developer App that is attached to a Project. You can create a project via the developer portal.",
      registration_url: "https://developer.twitter.com/en/docs/projects/overview",
      title: "Client Forbidden",
      required_enrollment: "Appropriate Level of API Access",
      reason: "client-not-enrolled",
      type: "https://api.twitter.com/2/problems/client-forbidden",
    });
  const m = metricsOf(ctx.s, id);
  return json(200, {
    data: {
      id,
      text: ctx.s.published.get(id)?.text ?? "",
      edit_history_tweet_ids: [id],
      public_metrics: {
        retweet_count: m.reposts,
        reply_count: m.comments,
        like_count: m.likes,
        quote_count: m.quotes,
        bookmark_count: m.bookmarks,
        impression_count: m.views,
      },
    },
  });
}
