/**
 * Instagram and Threads on the fake: Meta's Graph API containers (media required, fetched from its URL,
 * published only once FINISHED), the token's own user, container status, insights and post fields.
 * One handler serves both, as one Graph API does, with the rules where they differ.
 */
import { threadsTextLength } from "@site/domain/social";
import {
  bearerOf,
  type FakeState,
  type Fetched,
  fetchMedia,
  graphError,
  isExpired,
  json,
  metricsOf,
  nextSeq,
  now,
  type PlatformCall,
  tooShort,
} from "./state.ts";

type GraphPlatform = "instagram" | "threads";

type Container = {
  platform: GraphPlatform;
  owner: string;
  text: string;
  carouselItem: boolean;
  media: Fetched[];
  error: string | null;
  checksLeft: number;
  published: boolean;
};

/** A published media of a user, as its media list shows it. */
type Listed = { id: string; platform: GraphPlatform; text: string; at: number };

/**
 * The shared state, the containers both platforms make (one id space, as one Graph API) and each user's
 * published media, newest first.
 */
type GraphCtx = { s: FakeState; containers: Map<string, Container>; media: Map<string, Listed[]> };

/** A Graph call: the platform it was made to, beside the request. */
type GraphCall = PlatformCall & { platform: GraphPlatform };

/**
 * Graph versions served at the fake's clock: each until its "Available until" date
 * (https://developers.facebook.com/docs/graph-api/changelog/versions/); Threads serves v1.0
 * (https://developers.facebook.com/docs/threads/overview). A call to another version is refused.
 */
const GRAPH_SERVED: Record<string, string | null> = {
  "v21.0": "2027-01-21",
  "v22.0": "2027-05-20",
  "v23.0": "2027-10-08",
  "v24.0": "2028-02-18",
  "v25.0": "2028-07-29",
  "v26.0": null,
};

/** The Graph API handler of Instagram and Threads (`parts` start with the version). */
export function fakeGraph(s: FakeState): (platform: GraphPlatform, call: PlatformCall) => Promise<Response> {
  const ctx: GraphCtx = { s, containers: new Map(), media: new Map() };
  return (platform, call) => graph(ctx, { ...call, platform });
}

/**
 * graph.facebook.com serves Facebook Login tokens; an Instagram Login token is not one of them
 * ("two Meta host URLs", https://developers.facebook.com/docs/instagram-platform/overview#instagram-api-with-instagram-login).
 */
export function facebookGraph(s: FakeState, req: Request): Response {
  if (s.issued.get(bearerOf(req))?.platform === "instagram")
    return graphError(400, 190, "Invalid OAuth access token - Cannot parse access token");
  return graphError(400, 100, "Unsupported request");
}

async function graph(ctx: GraphCtx, c: GraphCall): Promise<Response> {
  const { s } = ctx;
  const { req, token } = c;
  const [version, ...parts] = c.parts;
  const ig = c.platform === "instagram";
  const until = ig ? GRAPH_SERVED[version ?? ""] : version === "v1.0" ? null : undefined;
  if (until === undefined || (until !== null && Date.parse(`${until}T00:00:00Z`) <= now(s)))
    return graphError(
      400,
      2635,
      `(#2635) You are calling a deprecated or unknown version of the API: ${version}`,
    );
  if (isExpired(s, token)) return graphError(400, 190, "Error validating access token: Session has expired.");
  const [id, edge] = parts;
  const who = s.issued.get(token);
  if (req.method === "GET" && id === "me" && !edge) return me(ctx, c);
  // A token acts for its own user: another id (a neighbouring one JSON.parse made) does not exist
  // for it (Graph error 100, "Object with ID … does not exist, cannot be loaded due to missing permissions").
  if (req.method === "POST" && who && id !== who.user && (edge === "media" || edge === "threads"))
    return graphError(
      400,
      100,
      `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
      { type: "GraphMethodException", subcode: 33 },
    );
  if (req.method === "POST" && edge === (ig ? "media" : "threads"))
    return createContainer(ctx, c.platform, id!, c.url.searchParams);
  if (req.method === "POST" && edge === (ig ? "media_publish" : "threads_publish"))
    return publishContainer(ctx, c, id!);
  if (req.method === "GET" && !edge && ctx.containers.has(id!)) return containerStatus(ctx, c, id!);
  if (req.method === "GET" && edge === (ig ? "media" : "threads")) return mediaList(ctx, c, id!);
  if (req.method === "GET" && edge === "insights") return insights(ctx, c, id!);
  if (req.method === "GET" && !edge) return postFields(ctx, c, id!);
  return graphError(400, 100, "Unsupported request");
}

/**
 * Instagram Login: GET /me?fields=user_id,username, `user_id` the professional account's id
 * (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started);
 * Threads: GET /me?fields=id,username (https://developers.facebook.com/docs/threads/threads-profiles).
 * Ids are JSON strings here: "the id from /me is the correct one".
 */
function me(ctx: GraphCtx, c: GraphCall): Response {
  const ig = c.platform === "instagram";
  const who = ctx.s.issued.get(c.token);
  if (!who) return graphError(400, 190, "Invalid OAuth access token - Cannot parse access token");
  const fields = (c.url.searchParams.get("fields") ?? "id").split(",");
  const out: Record<string, string> = {};
  if (fields.includes("id")) out.id = ig ? `2${who.user.slice(1)}` : who.user;
  if (fields.includes("user_id") && ig) out.user_id = who.user;
  if (fields.includes("username")) out.username = `fake_${who.user.slice(-4)}`;
  return json(200, out);
}

async function createContainer(
  ctx: GraphCtx,
  platform: GraphPlatform,
  owner: string,
  q: URLSearchParams,
): Promise<Response> {
  const ig = platform === "instagram";
  const carouselItem = q.get("is_carousel_item") === "true";
  const mediaType = q.get("media_type") ?? (ig && q.get("image_url") ? "IMAGE" : null);
  const text = q.get(ig ? "caption" : "text") ?? "";
  const made =
    mediaType === "CAROUSEL"
      ? carouselMedia(ctx, ig, owner, q)
      : await singleMedia(ctx.s, { ig, carouselItem, mediaType, text, q });
  if (made instanceof Response) return made;
  const id = `${platform === "instagram" ? "17" : "18"}${nextSeq(ctx.s)}`;
  ctx.containers.set(id, {
    platform,
    owner,
    text,
    carouselItem,
    media: made.media,
    error: made.error,
    checksLeft: ctx.s.processingChecks,
    published: false,
  });
  return json(200, { id });
}

function badParameter(message: string): Response {
  return graphError(400, 100, `(#100) ${message}`);
}

/**
 * Carousels: 2–10 children on Instagram (https://developers.facebook.com/docs/instagram-platform/content-publishing/#carousel-posts),
 * 2–20 on Threads (https://developers.facebook.com/docs/threads/posts#carousel-posts), each an
 * item container (is_carousel_item=true) of the same user, FINISHED before the carousel is made.
 */
function carouselMedia(
  ctx: GraphCtx,
  ig: boolean,
  owner: string,
  q: URLSearchParams,
): Response | { media: Fetched[]; error: null } {
  const ids = (q.get("children") ?? "").split(",").filter(Boolean);
  const max = ig ? 10 : 20;
  if (ids.length < 2 || ids.length > max) return badParameter(`children must list 2 to ${max} containers`);
  let media: Fetched[] = [];
  for (const id of ids) {
    const c = ctx.containers.get(id);
    if (!c || c.owner !== owner || !c.carouselItem)
      return badParameter(`${id} is not a carousel item of this user`);
    if (c.error || c.checksLeft > 0) return badParameter(`carousel item ${id} is not FINISHED`);
    media = media.concat(c.media);
  }
  return { media, error: null };
}

/**
 * Instagram: a container needs image_url, or video_url with media_type REELS (VIDEO for a carousel
 * item); a caption alone is refused (https://developers.facebook.com/docs/instagram-platform/content-publishing/).
 * Threads: media_type TEXT (text required, at most 500 characters), IMAGE (image_url) or VIDEO
 * (video_url) (https://developers.facebook.com/docs/threads/posts#step-1--create-a-threads-media-container).
 */
async function singleMedia(
  s: FakeState,
  o: { ig: boolean; carouselItem: boolean; mediaType: string | null; text: string; q: URLSearchParams },
): Promise<Response | { media: Fetched[]; error: string | null }> {
  const { ig, carouselItem, mediaType, text, q } = o;
  const isVideo = ig
    ? mediaType === "REELS" || (carouselItem && mediaType === "VIDEO")
    : mediaType === "VIDEO";
  const isImage = mediaType === "IMAGE";
  if (!ig && mediaType === "TEXT") {
    if (!text) return badParameter("text is required for media_type=TEXT");
  } else if (isImage) {
    if (!q.get("image_url")) return badParameter("The parameter image_url is required");
  } else if (isVideo) {
    if (!q.get("video_url")) return badParameter("The parameter video_url is required");
  } else if (ig && !mediaType) {
    return badParameter("The parameter image_url is required");
  } else return badParameter(`media_type ${mediaType ?? "(none)"} is not supported here`);
  // At most 500 characters, an emoji counted as its UTF-8 bytes (same page, Limitations).
  if (!ig && threadsTextLength(text) > 500) return badParameter("text is limited to 500 characters");
  if (!ig && carouselItem && mediaType === "TEXT")
    return badParameter("a carousel item is an IMAGE or a VIDEO");
  const url = isImage ? q.get("image_url") : isVideo ? q.get("video_url") : null;
  if (!url) return { media: [], error: null };
  // "We cURL media used in publishing attempts": the file must be reachable now, and of an
  // accepted format: Instagram images JPEG only
  // (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#image-specifications),
  // Threads images JPEG or PNG (https://developers.facebook.com/docs/threads/posts#media-specifications),
  // videos MP4 on both.
  // A Reel lasts "3 seconds min" (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reel-specifications):
  // a shorter one is refused late, its container ending in ERROR once processed.
  const got = await fetchMedia(s, url, ig && isVideo ? (b) => tooShort(b, 3) : undefined);
  if (typeof got === "string") return { media: [], error: got };
  const accepted = isVideo ? ["video/mp4"] : ig ? ["image/jpeg"] : ["image/jpeg", "image/png"];
  if (!accepted.includes(got.contentType))
    return { media: [], error: `${got.contentType} is not accepted (${accepted.join(", ")} only)` };
  return { media: [got], error: null };
}

function publishContainer(ctx: GraphCtx, c: GraphCall, owner: string): Response {
  const cid = c.url.searchParams.get("creation_id") ?? "";
  const container = ctx.containers.get(cid);
  if (!container || container.owner !== owner || container.carouselItem)
    return graphError(400, 100, "(#100) Invalid parameter creation_id");
  // Publishing a container that is not FINISHED is refused: Instagram error 9007 / 2207027 "the media
  // is not ready for publishing" (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes),
  // Threads likewise (https://developers.facebook.com/docs/threads/posts#step-2--publish-a-threads-media-container).
  if (container.error || container.checksLeft > 0)
    return graphError(400, 9007, "The media is not ready for publishing, please wait for a moment", {
      subcode: 2207027,
    });
  if (container.published)
    return graphError(400, 9007, "The media has already been published", { subcode: 2207008 });
  container.published = true;
  const mid = `${c.platform === "instagram" ? "1790" : "1810"}${nextSeq(ctx.s)}`;
  ctx.s.published.set(mid, { platform: c.platform, text: container.text, media: container.media });
  const list = ctx.media.get(owner) ?? [];
  list.unshift({ id: mid, platform: c.platform, text: container.text, at: now(ctx.s) });
  ctx.media.set(owner, list);
  return json(200, { id: mid });
}

const permalinkOf = (platform: GraphPlatform, id: string) =>
  platform === "instagram" ? `https://www.instagram.com/p/${id}/` : `https://www.threads.net/@me/post/${id}`;
const graphTimestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+0000");

/**
 * A user's published media, newest first, with the fields asked for (decision 1497). Instagram:
 * `GET /<IG_ID>/media` (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reading),
 * `caption`; Threads: `GET /<THREADS_USER_ID>/threads` with `since`/`until` and `limit`
 * (https://developers.facebook.com/docs/threads/retrieve-and-discover-posts/retrieve-posts), `text`.
 * `limit` caps the page (25 by default). A token reads its own user's media only.
 */
function mediaList(ctx: GraphCtx, c: GraphCall, id: string): Response {
  const who = ctx.s.issued.get(c.token);
  if (who && who.user !== id)
    return graphError(
      400,
      100,
      `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
      { type: "GraphMethodException", subcode: 33 },
    );
  const q = c.url.searchParams;
  const fields = (q.get("fields") ?? "id").split(",");
  const since = q.has("since") ? Number(q.get("since")) * 1000 : Number.NEGATIVE_INFINITY;
  const limit = Math.min(100, Math.max(1, Number(q.get("limit") ?? 25) || 25));
  const data = (ctx.media.get(id) ?? [])
    .filter((m) => m.platform === c.platform && m.at >= since)
    .slice(0, limit)
    .map((m) => {
      const out: Record<string, unknown> = { id: m.id };
      if (fields.includes("caption") && c.platform === "instagram") out.caption = m.text;
      if (fields.includes("text") && c.platform === "threads") out.text = m.text;
      if (fields.includes("permalink")) out.permalink = permalinkOf(c.platform, m.id);
      if (fields.includes("timestamp")) out.timestamp = graphTimestamp(m.at);
      return out;
    });
  return json(200, { data, paging: {} });
}

/**
 * Container status: Instagram `status_code` (with `status`), Threads `status` (with `error_message`)
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container).
 */
function containerStatus(ctx: GraphCtx, c: GraphCall, id: string): Response {
  const container = ctx.containers.get(id)!;
  let status = "FINISHED";
  if (container.published) status = "PUBLISHED";
  else if (container.checksLeft > 0) {
    container.checksLeft--;
    status = "IN_PROGRESS";
  } else if (container.error) status = "ERROR";
  const error = container.error;
  return json(
    200,
    c.platform === "instagram"
      ? { id, status_code: status, ...(error ? { status: error } : {}) }
      : { id, status, ...(error ? { error_message: error } : {}) },
  );
}

function insights(ctx: GraphCtx, c: GraphCall, id: string): Response {
  const ig = c.platform === "instagram";
  const perm = ig ? "instagram_manage_insights" : "threads_manage_insights";
  if (ctx.s.denied.has(`${c.token}:${perm}`))
    return graphError(ig ? 400 : 403, 10, "(#10) Application does not have permission for this action", {
      type: ig ? "OAuthException" : "THApiException",
    });
  const m = metricsOf(ctx.s, id);
  const names = (c.url.searchParams.get("metric") ?? "").split(",");
  const value: Record<string, number> = ig
    ? { views: m.views, reach: m.reach, saved: m.saves, shares: m.shares }
    : {
        views: m.views,
        likes: m.likes,
        replies: m.comments,
        reposts: m.reposts,
        quotes: m.quotes,
        shares: m.shares,
      };
  return json(200, {
    data: names
      .filter((n) => n in value)
      .map((n) => ({
        name: n,
        period: "lifetime",
        values: [{ value: value[n] }],
        title: n,
        description: n,
        id: `${id}/insights/${n}/lifetime`,
      })),
  });
}

function postFields(ctx: GraphCtx, c: GraphCall, id: string): Response {
  const fields = (c.url.searchParams.get("fields") ?? "").split(",");
  const m = metricsOf(ctx.s, id);
  const out: Record<string, unknown> = { id };
  if (fields.includes("permalink")) out.permalink = permalinkOf(c.platform, id);
  if (fields.includes("timestamp"))
    out.timestamp = new Date(now(ctx.s)).toISOString().replace(/\.\d{3}Z$/, "+0000");
  if (fields.includes("like_count")) out.like_count = m.likes;
  if (fields.includes("comments_count")) out.comments_count = m.comments;
  return json(200, out);
}
