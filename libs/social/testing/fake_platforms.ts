import { sniffImage } from "@site/domain/media";
import { type SocialPlatform, threadsTextLength, xTextLength } from "@site/domain/social";

/** Metric values a fake post reports, by the platforms' own names. */
export type FakeMetrics = {
  views: number;
  reach: number;
  likes: number;
  comments: number;
  saves: number;
  shares: number;
  reposts: number;
  quotes: number;
  bookmarks: number;
  score: number;
  upvoteRatio: number;
};

const DEFAULT_METRICS: FakeMetrics = {
  views: 1000,
  reach: 800,
  likes: 40,
  comments: 7,
  saves: 5,
  shares: 3,
  reposts: 4,
  quotes: 2,
  bookmarks: 6,
  score: 55,
  upvoteRatio: 0.93,
};

/** A request the fake received. */
export type FakeRequest = {
  platform: SocialPlatform;
  method: string;
  path: string;
  at: number;
  token: string;
};

/** What a platform published: its text and the type and size of each file it fetched or was sent. */
export type FakePublication = {
  platform: SocialPlatform;
  text: string;
  media: { contentType: string; size: number }[];
  /** TikTok: the privacy level it was posted with. */
  privacy?: string;
};

type Rule = { count: number; status: number; retryAfterS?: number };
type Fetched = { contentType: string; size: number };

/** The type of a file by its bytes: an image by its magic bytes, MP4 by its `ftyp` box, else null. */
function typeOfBytes(b: Uint8Array): string | null {
  const image = sniffImage(b);
  if (image) return image.contentType;
  if (b.length >= 12 && String.fromCharCode(...b.subarray(4, 8)) === "ftyp") return "video/mp4";
  return null;
}

/** TikTok's privacy levels, as creator_info/query lists them. */
const ALL_TIKTOK_PRIVACY = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
];

/** The LinkedIn versions (YYYYMM) served at `now`: the last 12 months, each kept at least a year. */
function activeLinkedinVersions(now: Date): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    out.add(`${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}`);
  }
  return out;
}

/**
 * Fake platform servers on 127.0.0.1 (one Bun server, one path prefix per platform) answering like the
 * real APIs and refusing what they refuse, each rule next to the reference page that states it: Graph API
 * containers for Instagram and Threads (media required, fetched from its URL, published only once
 * FINISHED), X media upload and posts, LinkedIn's versioned REST API and Images API, Reddit's submit and
 * media lease, TikTok's Content Posting API; with permission errors, expired tokens and 429s on demand.
 * Media URLs are fetched by `fetchMedia` (default `fetch`; a test app can answer them itself).
 */
export function startFakePlatforms(opts: { latencyMs?: number } = {}) {
  let seq = 0;
  const metrics = new Map<string, FakeMetrics>();
  const denied = new Set<string>(); // `${token}:${permission}`
  const expired = new Set<string>();
  const xFreeTier = new Set<string>();
  const rules = new Map<SocialPlatform, Rule>();
  const requests: FakeRequest[] = [];
  const inFlight = new Map<SocialPlatform, number>();
  const maxInFlight = new Map<SocialPlatform, number>();
  const published = new Map<string, FakePublication>();
  const hosted = new Map<string, { bytes: Uint8Array; contentType: string }>();
  const tiktokPrivacy = new Map<string, string[]>();
  /** The provider-side facts about our app that the strict rules follow (see each rule's page). */
  const app = {
    /** LinkedIn scopes of the app's products: the self-serve ones; r_member_social only when granted. */
    linkedinScopes: new Set(["openid", "profile", "email", "w_member_social"]),
    /** LinkedIn issues refresh tokens to Marketing Developer Platform partners only. */
    linkedinPartner: false,
    /** TikTok audited the app (public posts); unaudited apps may post SELF_ONLY only. */
    tiktokAudited: false,
  };
  /** URL prefixes verified with TikTok for PULL_FROM_URL (the fake's own media address always is). */
  const tiktokVerified: string[] = [];
  const state = {
    /** The fake platforms' clock, as an offset from the real one (tokens expire by it). */
    offsetMs: 0,
    /** How many status checks answer "not ready yet" before a container/upload/publish is ready. */
    processingChecks: 0,
    /** Fetches a media URL the way the platform would (cURL from its servers). */
    fetchMedia: (url: string): Promise<Response> => fetch(url),
  };

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    Response.json(body, { status, headers });
  const now = () => Date.now() + state.offsetMs;

  // ---- OAuth: issued tokens expire by the fake's clock; refresh tokens rotate where the platform does --
  type Issued = {
    platform: SocialPlatform;
    user: string;
    expiresAt: number;
    issuedAt: number;
    /** The scopes the user granted at authorize (null: a token the fake issued without a consent). */
    scopes: string[] | null;
  };
  const issued = new Map<string, Issued>();
  const refreshTokens = new Map<
    string,
    { platform: SocialPlatform; user: string; used: boolean; scopes: string[] | null }
  >();
  const codes = new Map<
    string,
    {
      platform: SocialPlatform;
      redirectUri: string;
      challenge: string | null;
      used: boolean;
      user: string;
      refresh: boolean;
      scopes: string[];
    }
  >();
  /** Access token lifetimes: X 2 h, Reddit 1 h, TikTok 24 h, LinkedIn 60 days, Meta long-lived 60 days. */
  const LIFETIME_S: Record<SocialPlatform, number> = {
    x: 7200,
    reddit: 3600,
    tiktok: 86_400,
    linkedin: 5_184_000,
    instagram: 5_184_000,
    threads: 5_184_000,
  };
  /** Refresh tokens used once are refused again where the platform rotates them (X, TikTok). */
  const ROTATES: Record<SocialPlatform, boolean> = {
    x: true,
    tiktok: true,
    reddit: false,
    linkedin: false,
    instagram: false,
    threads: false,
  };
  const CLIENT = (p: SocialPlatform) => ({ id: `client-${p}`, secret: `secret-${p}` });
  function issue(
    platform: SocialPlatform,
    user: string,
    lifetimeS = LIFETIME_S[platform],
    withRefresh = true,
    scopes: string[] | null = null,
  ) {
    const accessToken = `at-${platform}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
    issued.set(accessToken, { platform, user, expiresAt: now() + lifetimeS * 1000, issuedAt: now(), scopes });
    let refreshToken: string | null = null;
    if (withRefresh && platform !== "instagram" && platform !== "threads") {
      refreshToken = `rt-${platform}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
      refreshTokens.set(refreshToken, { platform, user, used: false, scopes });
    }
    return { accessToken, refreshToken, expiresIn: lifetimeS };
  }
  /**
   * Whether the token carries `scope`: a token issued after a consent has exactly the scopes granted
   * there; any other token (made up by a test) has every scope unless `deny` took it away.
   */
  const hasScope = (token: string, scope: string) => {
    const t = issued.get(token);
    if (t?.scopes) return t.scopes.includes(scope);
    return !denied.has(`${token}:${scope}`);
  };
  /**
   * Meta's user ids are int64 beyond 2^53 (17841400000000000123 is the form of an Instagram professional
   * account id); the token answer carries them as a JSON number
   * (https://github.com/fbsamples/threads_api/issues/9), so JSON.parse yields a neighbouring id.
   */
  const metaUserId = () => `178414${String(++seq).padStart(14, "0")}`;
  const refreshGrants = new Map<SocialPlatform, number>();
  const countRefresh = (p: SocialPlatform) => refreshGrants.set(p, (refreshGrants.get(p) ?? 0) + 1);
  /** While a test holds refreshes (holdRefresh), each refresh request waits here, counted, for release. */
  let refreshHold: { arrived: number; gate: Promise<void> } | null = null;
  const heldRefresh = async () => {
    const hold = refreshHold;
    if (!hold) return;
    hold.arrived++;
    await hold.gate;
  };
  const isExpired = (token: string) => {
    if (expired.has(token)) return true;
    const t = issued.get(token);
    return t !== undefined && t.expiresAt <= now();
  };
  const metricsOf = (id: string) => metrics.get(id) ?? DEFAULT_METRICS;
  const graphError = (
    status: number,
    code: number,
    message: string,
    type = "OAuthException",
    subcode?: number,
  ) =>
    json(status, {
      error: { message, type, code, ...(subcode ? { error_subcode: subcode } : {}), fbtrace_id: "AbCdEf123" },
    });

  /** Fetches a media URL; the type by its bytes, or why it could not be fetched. */
  async function fetchMedia(url: string | null | undefined): Promise<Fetched | string> {
    if (!url) return "no URL";
    let res: Response;
    try {
      res = await state.fetchMedia(url);
    } catch (err) {
      return `could not fetch ${url}: ${String(err)}`;
    }
    if (!res.ok) return `fetching the media answered HTTP ${res.status}`;
    const bytes = new Uint8Array(await res.arrayBuffer());
    const type = typeOfBytes(bytes);
    return type ? { contentType: type, size: bytes.byteLength } : "the media is not an image or an MP4 video";
  }

  // ---- Graph API containers (Instagram, Threads) -------------------------------------------------
  type Container = {
    platform: "instagram" | "threads";
    owner: string;
    text: string;
    carouselItem: boolean;
    media: Fetched[];
    error: string | null;
    checksLeft: number;
    published: boolean;
  };
  const containers = new Map<string, Container>();

  async function createGraphContainer(platform: "instagram" | "threads", owner: string, q: URLSearchParams) {
    const ig = platform === "instagram";
    const carouselItem = q.get("is_carousel_item") === "true";
    const mediaType = q.get("media_type") ?? (ig && q.get("image_url") ? "IMAGE" : null);
    const text = q.get(ig ? "caption" : "text") ?? "";
    const bad = (message: string) => graphError(400, 100, `(#100) ${message}`);
    let media: Fetched[] = [];
    let error: string | null = null;
    if (mediaType === "CAROUSEL") {
      // Carousels: 2–10 children on Instagram (https://developers.facebook.com/docs/instagram-platform/content-publishing/#carousel-posts),
      // 2–20 on Threads (https://developers.facebook.com/docs/threads/posts#carousel-posts), each an
      // item container (is_carousel_item=true) of the same user, FINISHED before the carousel is made.
      const ids = (q.get("children") ?? "").split(",").filter(Boolean);
      const max = ig ? 10 : 20;
      if (ids.length < 2 || ids.length > max) return bad(`children must list 2 to ${max} containers`);
      for (const id of ids) {
        const c = containers.get(id);
        if (!c || c.owner !== owner || !c.carouselItem)
          return bad(`${id} is not a carousel item of this user`);
        if (c.error || c.checksLeft > 0) return bad(`carousel item ${id} is not FINISHED`);
        media = media.concat(c.media);
      }
    } else {
      // Instagram: a container needs image_url, or video_url with media_type REELS (VIDEO for a carousel
      // item); a caption alone is refused (https://developers.facebook.com/docs/instagram-platform/content-publishing/).
      // Threads: media_type TEXT (text required, at most 500 characters), IMAGE (image_url) or VIDEO
      // (video_url) (https://developers.facebook.com/docs/threads/posts#step-1--create-a-threads-media-container).
      const isVideo = ig
        ? mediaType === "REELS" || (carouselItem && mediaType === "VIDEO")
        : mediaType === "VIDEO";
      const isImage = mediaType === "IMAGE";
      if (!ig && mediaType === "TEXT") {
        if (!text) return bad("text is required for media_type=TEXT");
      } else if (isImage) {
        if (!q.get("image_url")) return bad("The parameter image_url is required");
      } else if (isVideo) {
        if (!q.get("video_url")) return bad("The parameter video_url is required");
      } else if (ig && !mediaType) {
        return bad("The parameter image_url is required");
      } else return bad(`media_type ${mediaType ?? "(none)"} is not supported here`);
      // At most 500 characters, an emoji counted as its UTF-8 bytes (same page, Limitations).
      if (!ig && threadsTextLength(text) > 500) return bad("text is limited to 500 characters");
      if (!ig && carouselItem && mediaType === "TEXT") return bad("a carousel item is an IMAGE or a VIDEO");
      const url = isImage ? q.get("image_url") : isVideo ? q.get("video_url") : null;
      if (url) {
        // "We cURL media used in publishing attempts": the file must be reachable now, and of an
        // accepted format: Instagram images JPEG only
        // (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#image-specifications),
        // Threads images JPEG or PNG (https://developers.facebook.com/docs/threads/posts#media-specifications),
        // videos MP4 on both.
        const got = await fetchMedia(url);
        if (typeof got === "string") error = got;
        else {
          const accepted = isVideo ? ["video/mp4"] : ig ? ["image/jpeg"] : ["image/jpeg", "image/png"];
          if (!accepted.includes(got.contentType))
            error = `${got.contentType} is not accepted (${accepted.join(", ")} only)`;
          else media = [got];
        }
      }
    }
    const id = `${platform === "instagram" ? "17" : "18"}${++seq}`;
    containers.set(id, {
      platform,
      owner,
      text,
      carouselItem,
      media,
      error,
      checksLeft: state.processingChecks,
      published: false,
    });
    return json(200, { id });
  }

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
  function graph(
    platform: "instagram" | "threads",
    req: Request,
    url: URL,
    allParts: string[],
    token: string,
  ) {
    const [version, ...parts] = allParts;
    const ig = platform === "instagram";
    const until = ig ? GRAPH_SERVED[version ?? ""] : version === "v1.0" ? null : undefined;
    if (until === undefined || (until !== null && Date.parse(`${until}T00:00:00Z`) <= now()))
      return graphError(
        400,
        2635,
        `(#2635) You are calling a deprecated or unknown version of the API: ${version}`,
      );
    if (isExpired(token)) return graphError(400, 190, "Error validating access token: Session has expired.");
    const [id, edge] = parts;
    const who = issued.get(token);
    if (req.method === "GET" && id === "me" && !edge) {
      // Instagram Login: GET /me?fields=user_id,username, `user_id` the professional account's id
      // (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started);
      // Threads: GET /me?fields=id,username (https://developers.facebook.com/docs/threads/threads-profiles).
      // Ids are JSON strings here: "the id from /me is the correct one".
      if (!who) return graphError(400, 190, "Invalid OAuth access token - Cannot parse access token");
      const fields = (url.searchParams.get("fields") ?? "id").split(",");
      const out: Record<string, string> = {};
      if (fields.includes("id")) out.id = ig ? `2${who.user.slice(1)}` : who.user;
      if (fields.includes("user_id") && ig) out.user_id = who.user;
      if (fields.includes("username")) out.username = `fake_${who.user.slice(-4)}`;
      return json(200, out);
    }
    // A token acts for its own user: another id (a neighbouring one JSON.parse made) does not exist
    // for it (Graph error 100, "Object with ID … does not exist, cannot be loaded due to missing permissions").
    if (req.method === "POST" && who && id !== who.user && (edge === "media" || edge === "threads"))
      return graphError(
        400,
        100,
        `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
        "GraphMethodException",
        33,
      );
    if (req.method === "POST" && edge === (ig ? "media" : "threads"))
      return createGraphContainer(platform, id!, url.searchParams);
    if (req.method === "POST" && edge === (ig ? "media_publish" : "threads_publish")) {
      const cid = url.searchParams.get("creation_id") ?? "";
      const c = containers.get(cid);
      if (!c || c.owner !== id || c.carouselItem)
        return graphError(400, 100, "(#100) Invalid parameter creation_id");
      // Publishing a container that is not FINISHED is refused: Instagram error 9007 / 2207027 "the media
      // is not ready for publishing" (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes),
      // Threads likewise (https://developers.facebook.com/docs/threads/posts#step-2--publish-a-threads-media-container).
      if (c.error || c.checksLeft > 0)
        return graphError(
          400,
          9007,
          "The media is not ready for publishing, please wait for a moment",
          "OAuthException",
          2207027,
        );
      if (c.published)
        return graphError(400, 9007, "The media has already been published", "OAuthException", 2207008);
      c.published = true;
      const mid = `${ig ? "1790" : "1810"}${++seq}`;
      published.set(mid, { platform, text: c.text, media: c.media });
      return json(200, { id: mid });
    }
    if (req.method === "GET" && !edge && containers.has(id!)) {
      // Container status: Instagram `status_code` (with `status`), Threads `status` (with `error_message`)
      // (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container).
      const c = containers.get(id!)!;
      let s = "FINISHED";
      if (c.published) s = "PUBLISHED";
      else if (c.checksLeft > 0) {
        c.checksLeft--;
        s = "IN_PROGRESS";
      } else if (c.error) s = "ERROR";
      return json(
        200,
        ig
          ? { id, status_code: s, ...(c.error ? { status: c.error } : {}) }
          : { id, status: s, ...(c.error ? { error_message: c.error } : {}) },
      );
    }
    if (req.method === "GET" && edge === "insights") {
      const perm = ig ? "instagram_manage_insights" : "threads_manage_insights";
      if (denied.has(`${token}:${perm}`))
        return graphError(
          ig ? 400 : 403,
          10,
          "(#10) Application does not have permission for this action",
          ig ? "OAuthException" : "THApiException",
        );
      const m = metricsOf(id!);
      const names = (url.searchParams.get("metric") ?? "").split(",");
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
    if (req.method === "GET" && !edge) {
      const fields = (url.searchParams.get("fields") ?? "").split(",");
      const m = metricsOf(id!);
      const out: Record<string, unknown> = { id };
      if (fields.includes("permalink"))
        out.permalink = ig ? `https://www.instagram.com/p/${id}/` : `https://www.threads.net/@me/post/${id}`;
      if (fields.includes("timestamp"))
        out.timestamp = new Date(now()).toISOString().replace(/\.\d{3}Z$/, "+0000");
      if (fields.includes("like_count")) out.like_count = m.likes;
      if (fields.includes("comments_count")) out.comments_count = m.comments;
      return json(200, out);
    }
    return graphError(400, 100, "Unsupported request");
  }

  // ---- X API v2 ----------------------------------------------------------------------------------
  type XMedia = {
    owner: string;
    contentType: string;
    size: number;
    total: number;
    chunks: Uint8Array[];
    state: "uploading" | "processing" | "succeeded" | "failed";
    checksLeft: number;
  };
  const xMedia = new Map<string, XMedia>();
  const xCategory = new Map<string, string>();
  const xProblem = (status: number, title: string, detail: string) =>
    json(status, { title, detail, type: "https://api.x.com/2/problems/invalid-request", status });

  async function x(req: Request, url: URL, parts: string[], token: string) {
    if (isExpired(token))
      return json(401, { title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" });
    const path = parts.join("/");
    const body = async () => ((await req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    if (req.method === "GET" && path === "users/me") {
      // https://docs.x.com/x-api/users/get-my-user : the token's user.
      const who = issued.get(token);
      if (!who)
        return json(401, { title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" });
      return json(200, { data: { id: who.user, name: "Fake User", username: `fake_${who.user}` } });
    }
    if (req.method === "POST" && path === "media/upload") {
      // One-shot image upload: `media` (base64 in a JSON body) and `media_category` are required; an
      // image is at most 5 MB (https://docs.x.com/x-api/media/upload-media,
      // https://docs.x.com/x-api/media/quickstart/best-practices).
      const b = await body();
      if (typeof b.media !== "string" || !b.media)
        return xProblem(400, "Invalid Request", "media is required");
      // The one-shot upload's media_type has no image/gif (https://docs.x.com/x-api/media/upload-media,
      // the XDK's MediaUploadRequestOneShot enum): GIFs take the chunked flow with tweet_gif.
      const ONE_SHOT_TYPES = [
        "image/jpeg",
        "image/bmp",
        "image/png",
        "image/webp",
        "image/pjpeg",
        "image/tiff",
      ];
      if (b.media_type !== undefined && !ONE_SHOT_TYPES.includes(String(b.media_type)))
        return xProblem(400, "Invalid Request", `media_type must be one of ${ONE_SHOT_TYPES.join(", ")}`);
      if (!["tweet_image", "dm_image", "subtitles"].includes(String(b.media_category)))
        return xProblem(400, "Invalid Request", "media_category must be tweet_image, dm_image or subtitles");
      const bytes = new Uint8Array(Buffer.from(b.media, "base64"));
      const type = typeOfBytes(bytes);
      if (!type?.startsWith("image/") || type === "image/gif")
        return xProblem(400, "Invalid Request", "media is not a supported image");
      if (bytes.byteLength > 5 * 1024 * 1024) return xProblem(400, "Invalid Request", "image over 5 MB");
      const id = `${++seq}${"0".repeat(12)}`;
      xMedia.set(id, {
        owner: token,
        contentType: type,
        size: bytes.byteLength,
        total: bytes.byteLength,
        chunks: [],
        state: "succeeded",
        checksLeft: 0,
      });
      return json(200, {
        data: { id, media_key: `3_${id}`, size: bytes.byteLength, expires_after_secs: 86400 },
      });
    }
    if (req.method === "POST" && path === "media/upload/initialize") {
      // Chunked upload: initialize with media_type and total_bytes, append segments, finalize, then
      // poll the status until `succeeded` (https://docs.x.com/x-api/media/initialize-media-upload).
      const b = await body();
      const total = Number(b.total_bytes);
      if (!Number.isSafeInteger(total) || total < 1 || typeof b.media_type !== "string")
        return xProblem(400, "Invalid Request", "media_type and total_bytes are required");
      const category = String(b.media_category ?? "");
      if (!["tweet_video", "tweet_gif", "tweet_image", "amplify_video"].includes(category))
        return xProblem(400, "Invalid Request", "media_category is required (tweet_video, tweet_gif…)");
      const id = `${++seq}${"1".repeat(12)}`;
      xCategory.set(id, category);
      xMedia.set(id, {
        owner: token,
        contentType: b.media_type,
        size: 0,
        total,
        chunks: [],
        state: "uploading",
        checksLeft: state.processingChecks,
      });
      return json(200, { data: { id, media_key: `7_${id}`, expires_after_secs: 86400 } });
    }
    const chunked = /^media\/upload\/(\d+)\/(append|finalize)$/.exec(path);
    if (req.method === "POST" && chunked) {
      const m = xMedia.get(chunked[1]!);
      if (!m || m.owner !== token) return xProblem(400, "Invalid Request", "unknown media id");
      if (chunked[2] === "append") {
        // https://docs.x.com/x-api/media/append-media-upload : `media` and `segment_index` in order.
        const b = await body();
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
      // https://docs.x.com/x-api/media/finalize-media-upload : the bytes sent must be total_bytes.
      if (m.size !== m.total)
        return xProblem(400, "Invalid Request", `${m.size} bytes sent, ${m.total} declared`);
      const all = Buffer.concat(m.chunks);
      // tweet_gif takes an animated GIF (up to 15 MB), tweet_video an MP4
      // (https://docs.x.com/x-api/media/quickstart/best-practices).
      const wanted = xCategory.get(chunked[1]!) === "tweet_gif" ? "image/gif" : "video/mp4";
      m.state = typeOfBytes(all) === wanted && m.contentType === wanted ? "processing" : "failed";
      return json(200, {
        data: {
          id: chunked[1],
          media_key: `7_${chunked[1]}`,
          size: m.size,
          processing_info: { state: m.state === "failed" ? "failed" : "pending", check_after_secs: 1 },
        },
      });
    }
    if (req.method === "GET" && path === "media/upload" && url.searchParams.get("command") === "STATUS") {
      // https://docs.x.com/x-api/media/get-media-upload-status
      const id = url.searchParams.get("media_id") ?? "";
      const m = xMedia.get(id);
      if (!m || m.owner !== token) return xProblem(400, "Invalid Request", "unknown media id");
      if (m.state === "processing") {
        if (m.checksLeft > 0) m.checksLeft--;
        else m.state = "succeeded";
      }
      const s = m.state === "processing" ? "in_progress" : m.state;
      return json(200, {
        data: { id, media_key: `7_${id}`, processing_info: { state: s, check_after_secs: 1 } },
      });
    }
    if (req.method === "POST" && path === "tweets") {
      // POST /2/tweets: text or media is required; media.media_ids lists 1–4 uploaded media of this
      // user, at most one of them a video or GIF and then alone
      // (https://docs.x.com/x-api/posts/create-post, https://docs.x.com/x-api/media/quickstart/best-practices).
      const b = (await body()) as { text?: string; media?: { media_ids?: string[] } };
      const ids = b.media?.media_ids ?? [];
      if (!b.text && ids.length === 0) return xProblem(400, "Invalid Request", "text or media is required");
      // At most 280 weighted characters, a URL counting 23 (https://docs.x.com/fundamentals/counting-characters).
      if (b.text && xTextLength(b.text) > 280)
        return xProblem(400, "Invalid Request", "text: a post is limited to 280 weighted characters");
      if (b.media && (ids.length < 1 || ids.length > 4))
        return xProblem(400, "Invalid Request", "media.media_ids must list 1 to 4 ids");
      const media: Fetched[] = [];
      for (const id of ids) {
        const m = xMedia.get(id);
        if (!m || m.owner !== token || m.state !== "succeeded")
          return xProblem(400, "Invalid Request", `Your media IDs are invalid: ${id}`);
        media.push({ contentType: m.contentType, size: m.size });
      }
      if (
        media.some((m) => m.contentType.startsWith("video/") || m.contentType === "image/gif") &&
        media.length > 1
      )
        return xProblem(400, "Invalid Request", "a video must be the only media of a post");
      const id = `18${String(++seq).padStart(8, "0")}`;
      published.set(id, { platform: "x", text: b.text ?? "", media });
      return json(201, { data: { id, text: b.text ?? "", edit_history_tweet_ids: [id] } });
    }
    if (req.method === "GET" && parts[0] === "tweets" && parts[1]) {
      if (xFreeTier.has(token))
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
      const m = metricsOf(parts[1]);
      return json(200, {
        data: {
          id: parts[1],
          text: published.get(parts[1])?.text ?? "",
          edit_history_tweet_ids: [parts[1]],
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
    return json(404, {
      title: "Not Found Error",
      type: "https://api.twitter.com/2/problems/resource-not-found",
      detail: "no such route",
    });
  }

  // ---- LinkedIn REST -----------------------------------------------------------------------------
  /**
   * What LinkedIn shows of a commentary in "little text": `\x` is the character x; an unescaped reserved
   * character (`\ | { } @ [ ] ( ) < > # * _ ~`) starts markup, and a text that is not valid markup is
   * kept only up to it, while the post is still answered 201
   * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/little-text-format).
   */
  function littleText(commentary: string): string {
    let out = "";
    for (let i = 0; i < commentary.length; i++) {
      const c = commentary[i]!;
      if (c === "\\") {
        out += commentary[i + 1] ?? "";
        i++;
      } else if ("|{}@[]()<>#*_~".includes(c)) break;
      else out += c;
    }
    return out;
  }
  const linkedinImages = new Map<string, { owner: string; token: string; bytes: Fetched | null }>();

  async function linkedinUpload(req: Request, parts: string[]) {
    // The upload URL of initializeUpload takes a PUT of the image bytes with the member's bearer token
    // (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api#upload-the-image).
    const urn = decodeURIComponent(parts[1] ?? "");
    const img = linkedinImages.get(urn);
    const token = (req.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
    if (req.method !== "PUT" || !img || img.token !== token) return new Response(null, { status: 403 });
    const bytes = new Uint8Array(await req.arrayBuffer());
    const type = typeOfBytes(bytes);
    // JPG, GIF and PNG images (same page, "Image specifications").
    if (!type || !["image/jpeg", "image/png", "image/gif"].includes(type))
      return json(400, { status: 400, code: "BAD_REQUEST", message: "unsupported image format" });
    img.bytes = { contentType: type, size: bytes.byteLength };
    return new Response(null, { status: 201 });
  }

  /**
   * The Videos API (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api):
   * a video of 75 KB to 500 MB, declared by `fileSizeBytes`, uploaded in 4 MB parts (4,194,304 bytes, the
   * last one the rest), each PUT to its `uploadUrl` and answered with an ETag; `finalizeUpload` needs every
   * ETag in order; the bytes must be an MP4 ("Video specifications": MP4). Then PROCESSING, then AVAILABLE.
   */
  const LI_PART = 4_194_304;
  const linkedinVideos = new Map<
    string,
    {
      owner: string;
      token: string;
      size: number;
      parts: { first: number; last: number; etag: string | null; bytes: Uint8Array | null }[];
      uploadToken: string;
      status: "WAITING_UPLOAD" | "PROCESSING" | "AVAILABLE" | "PROCESSING_FAILED";
      bytes: Fetched | null;
    }
  >();

  async function linkedinVideoUpload(req: Request, parts: string[]) {
    const v = linkedinVideos.get(decodeURIComponent(parts[1] ?? ""));
    const part = v?.parts[Number(parts[2])];
    const token = (req.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
    if (req.method !== "PUT" || !v || !part || v.token !== token) return new Response(null, { status: 403 });
    const bytes = new Uint8Array(await req.arrayBuffer());
    // Each part is exactly its firstByte–lastByte range (same page, "Upload the video").
    if (bytes.byteLength !== part.last - part.first + 1)
      return json(400, {
        status: 400,
        code: "BAD_REQUEST",
        message: "the part is not its declared byte range",
      });
    part.bytes = bytes;
    part.etag = `/etag-${++seq}`;
    return new Response(null, { status: 200, headers: { etag: part.etag } });
  }

  async function linkedinVideos_(req: Request, url: URL, path: string, parts: string[], token: string) {
    const unprocessable = (message: string) =>
      json(422, { status: 422, code: "UNPROCESSABLE_ENTITY", message });
    const action = url.searchParams.get("action");
    if (req.method === "POST" && path === "rest/videos" && action === "initializeUpload") {
      const b = (await req.json().catch(() => ({}))) as {
        initializeUploadRequest?: { owner?: string; fileSizeBytes?: number };
      };
      const owner = b.initializeUploadRequest?.owner;
      const size = Number(b.initializeUploadRequest?.fileSizeBytes);
      if (!owner?.startsWith("urn:li:")) return unprocessable("initializeUploadRequest.owner is required");
      // "Video specifications": length 3 s to 30 min, file size 75 KB to 500 MB.
      if (!Number.isInteger(size) || size < 75 * 1024 || size > 500 * 1024 * 1024)
        return unprocessable("fileSizeBytes must be between 75 KB and 500 MB");
      const urn = `urn:li:video:D4E${++seq}`;
      const count = Math.ceil(size / LI_PART);
      const origin = url.origin + url.pathname.slice(0, url.pathname.indexOf("/rest/"));
      const video = {
        owner,
        token,
        size,
        parts: Array.from({ length: count }, (_, i) => ({
          first: i * LI_PART,
          last: Math.min(size, (i + 1) * LI_PART) - 1,
          etag: null,
          bytes: null,
        })),
        uploadToken: `ut-${seq}`,
        status: "WAITING_UPLOAD" as const,
        bytes: null,
      };
      linkedinVideos.set(urn, video);
      return json(200, {
        value: {
          uploadUrlsExpireAt: Date.now() + 3_600_000,
          video: urn,
          uploadInstructions: video.parts.map((p, i) => ({
            uploadUrl: `${origin}/upload-video/${encodeURIComponent(urn)}/${i}`,
            firstByte: p.first,
            lastByte: p.last,
          })),
          uploadToken: video.uploadToken,
        },
      });
    }
    if (req.method === "POST" && path === "rest/videos" && action === "finalizeUpload") {
      const b = (await req.json().catch(() => ({}))) as {
        finalizeUploadRequest?: { video?: string; uploadToken?: string; uploadedPartIds?: string[] };
      };
      const f = b.finalizeUploadRequest;
      const v = f?.video ? linkedinVideos.get(f.video) : undefined;
      if (!v || v.token !== token || f?.uploadToken !== v.uploadToken)
        return unprocessable("finalizeUploadRequest: unknown video or upload token");
      const etags = v.parts.map((p) => p.etag);
      if (etags.some((e) => !e) || JSON.stringify(f.uploadedPartIds ?? []) !== JSON.stringify(etags))
        return unprocessable("uploadedPartIds must be the ETags of every part, in order");
      const all = new Uint8Array(v.size);
      for (const p of v.parts) all.set(p.bytes!, p.first);
      const type = typeOfBytes(all);
      if (type !== "video/mp4") {
        v.status = "PROCESSING_FAILED";
        return new Response(null, { status: 200 });
      }
      v.bytes = { contentType: type, size: all.byteLength };
      v.status = "PROCESSING";
      return new Response(null, { status: 200 });
    }
    if (req.method === "GET" && parts[0] === "rest" && parts[1] === "videos" && parts[2]) {
      const urn = decodeURIComponent(parts[2]);
      const v = linkedinVideos.get(urn);
      if (!v) return json(404, { status: 404, code: "NOT_FOUND", message: "Not Found" });
      const status = v.status;
      // Processing ends by the next read.
      if (v.status === "PROCESSING") v.status = "AVAILABLE";
      return json(200, { id: urn, owner: v.owner, status, duration: 6000 });
    }
    return null;
  }

  async function linkedin(req: Request, url: URL, parts: string[], token: string) {
    if (parts[0] === "upload") return linkedinUpload(req, parts);
    if (parts[0] === "upload-video") return linkedinVideoUpload(req, parts);
    if (req.method === "GET" && parts.join("/") === "v2/userinfo") {
      // OpenID userinfo (unversioned /v2): `sub` is the member id.
      const who = issued.get(token);
      if (!who || isExpired(token))
        return json(401, { status: 401, code: "EXPIRED_ACCESS_TOKEN", message: "expired" });
      return json(200, { sub: who.user, name: "Fake Member", email_verified: true });
    }
    // Every versioned call carries `LinkedIn-Version: YYYYMM`; a missing one is refused, and a version
    // older than a year is sunset and answered 426
    // (https://learn.microsoft.com/en-us/linkedin/marketing/versioning).
    const version = req.headers.get("linkedin-version");
    if (!version)
      return json(400, {
        status: 400,
        code: "VERSION_MISSING",
        message: "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
      });
    if (!activeLinkedinVersions(new Date()).has(version))
      return json(426, {
        status: 426,
        code: "NONEXISTENT_VERSION",
        message: `Requested version ${version} is not active`,
      });
    if (isExpired(token))
      return json(401, {
        status: 401,
        serviceErrorCode: 65601,
        code: "REVOKED_ACCESS_TOKEN",
        message: "The token used in the request has been revoked by the user",
      });
    const path = parts.join("/");
    const videoAnswer = await linkedinVideos_(req, url, path, parts, token);
    if (videoAnswer) return videoAnswer;
    if (
      req.method === "POST" &&
      path === "rest/images" &&
      url.searchParams.get("action") === "initializeUpload"
    ) {
      // initializeUploadRequest.owner (a person or organization URN) is required (images-api page).
      const b = (await req.json().catch(() => ({}))) as { initializeUploadRequest?: { owner?: string } };
      const owner = b.initializeUploadRequest?.owner;
      if (!owner?.startsWith("urn:li:"))
        return json(422, {
          status: 422,
          code: "UNPROCESSABLE_ENTITY",
          message: "initializeUploadRequest.owner is required",
        });
      const urn = `urn:li:image:C4E${++seq}`;
      linkedinImages.set(urn, { owner, token, bytes: null });
      const origin = url.origin + url.pathname.slice(0, url.pathname.indexOf("/rest/"));
      return json(200, {
        value: {
          uploadUrlExpiresAt: Date.now() + 3_600_000,
          uploadUrl: `${origin}/upload/${encodeURIComponent(urn)}`,
          image: urn,
        },
      });
    }
    if (req.method === "POST" && path === "rest/posts") {
      // A post's content is one image (`content.media.id`) or a `multiImage` of 2–20 images, each an
      // uploaded image of the author (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api,
      // .../multiimage-post-api).
      const b = (await req.json()) as {
        author?: string;
        commentary?: string;
        content?: { media?: { id?: string }; multiImage?: { images?: { id?: string }[] } };
      };
      const ids = b.content?.media?.id
        ? [b.content.media.id]
        : (b.content?.multiImage?.images ?? []).map((i) => i.id ?? "");
      if (b.content?.multiImage && (ids.length < 2 || ids.length > 20))
        return json(422, {
          status: 422,
          code: "UNPROCESSABLE_ENTITY",
          message: "multiImage takes 2 to 20 images",
        });
      const media: Fetched[] = [];
      // A video post: `content.media.id` is a video URN of the author, AVAILABLE (videos-api page).
      if (ids.length === 1 && ids[0]!.startsWith("urn:li:video:")) {
        const v = linkedinVideos.get(ids[0]!);
        if (!v || v.owner !== b.author || v.status !== "AVAILABLE" || !v.bytes)
          return json(422, {
            status: 422,
            code: "UNPROCESSABLE_ENTITY",
            message: `${ids[0]} is not an available video of the author`,
          });
        media.push(v.bytes);
        ids.length = 0;
      }
      for (const id of ids) {
        const img = linkedinImages.get(id);
        if (!img || img.owner !== b.author || !img.bytes)
          return json(422, {
            status: 422,
            code: "UNPROCESSABLE_ENTITY",
            message: `${id} is not an uploaded image of the author`,
          });
        media.push(img.bytes);
      }
      const urn = `urn:li:share:7${String(++seq).padStart(9, "0")}`;
      published.set(urn, { platform: "linkedin", text: littleText(b.commentary ?? ""), media });
      return new Response(null, { status: 201, headers: { "x-restli-id": urn } });
    }
    if (req.method === "GET" && parts[0] === "rest" && parts[1] === "socialActions" && parts[2]) {
      const urn = decodeURIComponent(parts[2]);
      // socialActions needs r_member_social, a restricted scope ("granted to select developers only",
      // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/members/post-statistics).
      if (!hasScope(token, "r_member_social"))
        return json(403, {
          status: 403,
          serviceErrorCode: 100,
          code: "ACCESS_DENIED",
          message: "Not enough permissions to access: socialActions.GET.20241101",
        });
      const m = metricsOf(urn);
      return json(200, {
        likesSummary: { likedByCurrentUser: false, totalLikes: m.likes, aggregatedTotalLikes: m.likes },
        commentsSummary: { totalFirstLevelComments: m.comments, aggregatedTotalComments: m.comments },
        target: urn,
        $URN: `urn:li:socialActions:${urn}`,
      });
    }
    return json(404, { status: 404, code: "NOT_FOUND", message: "Not Found" });
  }

  // ---- Reddit --------------------------------------------------------------------------------------
  const redditLeases = new Map<string, { token: string; mimetype: string; uploaded: Fetched | null }>();
  const redditSubmitted = new Map<string, Record<string, unknown>[]>(); // by user

  async function redditUpload(req: Request, url: URL, parts: string[]) {
    // The lease's storage takes a multipart POST with every lease field and the file last (PRAW's
    // `_upload_media`, https://github.com/praw-dev/praw/blob/main/praw/models/reddit/subreddit.py).
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const form = await req.formData().catch(() => null);
    const key = form?.get("key");
    const lease = typeof key === "string" ? redditLeases.get(key) : undefined;
    const file = form?.get("file");
    if (!form || !lease || form.get("x-amz-signature") !== `sig-${key}` || !(file instanceof Blob))
      return new Response("<Error><Code>AccessDenied</Code></Error>", { status: 403 });
    const bytes = new Uint8Array(await file.arrayBuffer());
    const type = typeOfBytes(bytes);
    if (type !== lease.mimetype)
      return new Response("<Error><Code>InvalidArgument</Code></Error>", { status: 400 });
    lease.uploaded = { contentType: type, size: bytes.byteLength };
    return new Response(
      `<PostResponse><Location>${url.origin}/${parts.join("/")}/${key}</Location></PostResponse>`,
      {
        status: 201,
      },
    );
  }

  const REDDIT_UA = /^[\w.-]+:[\w.-]+:[\w.-]+ \(by \/u\/[\w-]{3,20}\)$/;
  async function reddit(req: Request, url: URL, parts: string[], token: string) {
    if (parts[0] === "media-upload") return redditUpload(req, url, parts);
    // Reddit refuses clients without a User-Agent of its form `<platform>:<app ID>:<version string>
    // (by /u/<reddit username>)` (https://github.com/reddit-archive/reddit/wiki/API#rules).
    if (!REDDIT_UA.test(req.headers.get("user-agent") ?? ""))
      return json(429, { message: "Too Many Requests", error: 429 });
    if (isExpired(token)) return json(401, { message: "Unauthorized", error: 401 });
    const path = parts.join("/");
    if (req.method === "GET" && path === "api/v1/me") {
      // https://www.reddit.com/dev/api/#GET_api_v1_me
      const who = issued.get(token);
      if (!who) return json(401, { message: "Unauthorized", error: 401 });
      return json(200, { name: who.user, id: who.user });
    }
    if (req.method === "POST" && path === "api/media/asset.json") {
      // The upload lease: `filepath` and `mimetype` (an image type, or video/mp4 for submit_video) are
      // required (PRAW, same file).
      const form = new URLSearchParams(await req.text());
      const mimetype = form.get("mimetype") ?? "";
      if (!form.get("filepath") || !["image/jpeg", "image/png", "image/gif", "video/mp4"].includes(mimetype))
        return json(400, {
          json: { errors: [["BAD_IMAGE", "filepath and an image mimetype are required", "mimetype"]] },
        });
      const key = `rte_images/${++seq}/${form.get("filepath")}`;
      redditLeases.set(key, { token, mimetype, uploaded: null });
      const origin = url.origin + url.pathname.slice(0, url.pathname.indexOf("/api/"));
      return json(200, {
        args: {
          action: `${origin}/media-upload`,
          fields: [
            { name: "key", value: key },
            { name: "Content-Type", value: mimetype },
            { name: "x-amz-signature", value: `sig-${key}` },
          ],
        },
        asset: {
          asset_id: `a${seq}`,
          processing_state: "incomplete",
          websocket_url: "wss://example.invalid/x",
        },
      });
    }
    if (req.method === "POST" && path === "api/submit") {
      // https://www.reddit.com/dev/api/#POST_api_submit : a title (1–300 characters); kind self with
      // text, or link/image with a url; an image must be one uploaded through a lease of this user.
      const form = new URLSearchParams(await req.text());
      const title = form.get("title") ?? "";
      const sr = form.get("sr") ?? "";
      if (!title || title.length > 300)
        return json(200, { json: { errors: [["BAD_TITLE", "title must be 1 to 300 characters", "title"]] } });
      const kind = form.get("kind");
      const id = (++seq).toString(36).padStart(6, "a");
      const owner = sr.replace(/^u_/, "");
      const leaseOf = (u: string) =>
        redditLeases.get(u.slice(u.indexOf("/media-upload/") + "/media-upload/".length));
      if (kind === "image" || kind === "video") {
        const lease = leaseOf(form.get("url") ?? "");
        const isVideo = (l: typeof lease) => l?.uploaded?.contentType === "video/mp4";
        if (!lease || lease.token !== token || !lease.uploaded || isVideo(lease) !== (kind === "video"))
          return json(200, {
            json: { errors: [["NO_URL", `the url is not an uploaded ${kind} of this user`, "url"]] },
          });
        // kind=video goes with `video_poster_url`, an image uploaded through a lease too (PRAW's
        // submit_video always sends it: its own logo when the caller gives no thumbnail).
        if (kind === "video") {
          const poster = leaseOf(form.get("video_poster_url") ?? "");
          if (!poster || poster.token !== token || !poster.uploaded || isVideo(poster))
            return json(200, {
              json: { errors: [["NO_URL", "video_poster_url is not an uploaded image", "video_poster_url"]] },
            });
        }
        published.set(`t3_${id}`, { platform: "reddit", text: title, media: [lease.uploaded] });
        const list = redditSubmitted.get(owner) ?? [];
        list.unshift({
          id,
          name: `t3_${id}`,
          title,
          is_self: false,
          permalink: `/r/${sr}/comments/${id}/post/`,
        });
        redditSubmitted.set(owner, list);
        // An image post answers without the post's name: it is made once the media is processed.
        return json(200, {
          json: {
            errors: [],
            data: {
              user_submitted_page: `https://www.reddit.com/user/${owner}/submitted/`,
              websocket_url: "wss://example.invalid/x",
            },
          },
        });
      }
      if (kind !== "self") return json(200, { json: { errors: [["INVALID_OPTION", "kind", "kind"]] } });
      published.set(`t3_${id}`, { platform: "reddit", text: form.get("text") ?? "", media: [] });
      return json(200, {
        json: {
          errors: [],
          data: {
            url: `https://www.reddit.com/r/${sr}/comments/${id}/post/`,
            drafts_count: 0,
            id,
            name: `t3_${id}`,
          },
        },
      });
    }
    if (req.method === "GET" && parts[0] === "user" && parts[2] === "submitted") {
      // The submitted listing is under the `history` scope (https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted);
      // a token without it is refused 403 (insufficient_scope).
      if (!hasScope(token, "history"))
        return json(403, { message: "Forbidden", error: 403, reason: "insufficient_scope" });
      const list = redditSubmitted.get(decodeURIComponent(parts[1] ?? "")) ?? [];
      // A listing's posts carry their figures, as /api/info's do.
      const withFigures = list.map((d) => {
        const m = metricsOf(String(d.name));
        return { ...d, score: m.score, ups: m.score, num_comments: m.comments, upvote_ratio: m.upvoteRatio };
      });
      return json(200, {
        kind: "Listing",
        data: { children: withFigures.map((d) => ({ kind: "t3", data: d })) },
      });
    }
    if (req.method === "GET" && path === "api/info") {
      const name = url.searchParams.get("id") ?? "";
      const m = metricsOf(name);
      const id = name.replace(/^t3_/, "");
      return json(200, {
        kind: "Listing",
        data: {
          after: null,
          dist: 1,
          modhash: null,
          geo_filter: "",
          children: [
            {
              kind: "t3",
              data: {
                id,
                name,
                score: m.score,
                ups: m.score,
                num_comments: m.comments,
                upvote_ratio: m.upvoteRatio,
                permalink: `/comments/${id}/post/`,
                created_utc: Date.now() / 1000,
              },
            },
          ],
          before: null,
        },
      });
    }
    return json(404, { message: "Not Found", error: 404 });
  }

  // ---- TikTok --------------------------------------------------------------------------------------
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
  const tiktokPublishes = new Map<string, TikTokPublish>();

  /**
   * FILE_UPLOAD: the upload_url takes PUTs of the chunks in order with `Content-Range: bytes
   * first-last/total` and Content-Type video/mp4 (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#file_upload).
   */
  async function tiktokUpload(req: Request, parts: string[]) {
    const p = tiktokPublishes.get(decodeURIComponent(parts[1] ?? ""));
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

  async function tiktok(req: Request, parts: string[], token: string) {
    if (parts[0] === "tiktok-upload") return tiktokUpload(req, parts);
    const logId = `2026${++seq}`;
    const err = (status: number, code: string, message: string) =>
      json(status, { data: {}, error: { code, message, log_id: logId } });
    const okAnswer = (data: unknown) =>
      json(200, { data, error: { code: "ok", message: "", log_id: logId } });
    if (isExpired(token))
      return err(401, "access_token_invalid", "The access token is invalid or not found in the request.");
    const path = parts.join("/");
    // Requests carry `Content-Type: application/json; charset=UTF-8`
    // (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post).
    if (req.method === "POST" && !(req.headers.get("content-type") ?? "").startsWith("application/json"))
      return err(400, "invalid_params", "Content-Type must be application/json; charset=UTF-8");
    const options = tiktokPrivacy.get(token) ?? ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"];
    if (req.method === "POST" && path === "post/publish/creator_info/query")
      // https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info
      return okAnswer({
        creator_avatar_url: "https://p16.example.invalid/a.jpeg",
        creator_username: `creator_${token.slice(-6)}`,
        creator_nickname: "Creator",
        privacy_level_options: options,
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: true,
        max_video_post_duration_sec: 600,
      });
    if (
      req.method === "POST" &&
      (path === "post/publish/content/init" || path === "post/publish/video/init")
    ) {
      const b = (await req.json().catch(() => ({}))) as {
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
      const video = path === "post/publish/video/init";
      const privacy = b.post_info?.privacy_level ?? "";
      // privacy_level must be one of the creator's privacy_level_options (creator_info/query); else
      // `privacy_level_option_mismatch` (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post#error_codes).
      if (!options.includes(privacy))
        return err(
          400,
          "privacy_level_option_mismatch",
          `privacy_level ${privacy || "(none)"} is not one the creator allows`,
        );
      // An app TikTok has not audited may only post privately: "all content posted by unaudited clients
      // will be restricted to private viewing mode"; another level is refused with
      // unaudited_client_can_only_post_to_private_accounts
      // (https://developers.tiktok.com/doc/content-posting-api-get-started#step_3,
      // https://developers.tiktok.com/doc/content-posting-api-reference-direct-post#error_codes).
      if (!app.tiktokAudited && privacy !== "SELF_ONLY")
        return err(
          403,
          "unaudited_client_can_only_post_to_private_accounts",
          "Please review our integration guidelines at https://developers.tiktok.com/doc/content-sharing-guidelines/",
        );
      if (b.source_info?.source !== "PULL_FROM_URL" && b.source_info?.source !== "FILE_UPLOAD")
        return err(400, "invalid_params", "source_info.source must be PULL_FROM_URL or FILE_UPLOAD");
      let urls: string[];
      let upload: TikTokPublish["upload"] = null;
      if (video && b.source_info.source === "FILE_UPLOAD") {
        // FILE_UPLOAD: video_size, chunk_size and total_chunk_count; a video of at most 64 MB may go
        // whole (chunk_size = video_size), else chunks of 5–64 MB, total_chunk_count =
        // floor(video_size / chunk_size) (media transfer guide, "Chunk restrictions").
        const si = b.source_info as { video_size?: number; chunk_size?: number; total_chunk_count?: number };
        const size = Number(si.video_size);
        const chunk = Number(si.chunk_size);
        const count = Number(si.total_chunk_count);
        const MB = 1024 * 1024;
        const whole = chunk === size && count === 1 && size <= 64 * MB;
        const chunked = chunk >= 5 * MB && chunk <= 64 * MB && count === Math.floor(size / chunk);
        if (!Number.isSafeInteger(size) || size < 1 || !(whole || chunked))
          return err(400, "invalid_params", "video_size, chunk_size and total_chunk_count do not agree");
        upload = { chunks: [], size, chunkSize: chunk, count, received: 0 };
        urls = [];
      } else if (video) {
        // Video direct post: source_info.video_url for PULL_FROM_URL; title at most 2200 characters.
        if (!b.source_info.video_url) return err(400, "invalid_params", "source_info.video_url is required");
        if ((b.post_info?.title ?? "").length > 2200)
          return err(400, "invalid_params", "title over 2200 characters");
        urls = [b.source_info.video_url];
      } else {
        // Photo post: media_type PHOTO, post_mode DIRECT_POST or MEDIA_UPLOAD, photo_images 1–35 URLs
        // (only PULL_FROM_URL), photo_cover_index within them, title ≤ 90, description ≤ 4000
        // (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post).
        if (b.media_type !== "PHOTO") return err(400, "invalid_params", "media_type must be PHOTO");
        if (b.post_mode !== "DIRECT_POST" && b.post_mode !== "MEDIA_UPLOAD")
          return err(400, "invalid_params", "post_mode must be DIRECT_POST or MEDIA_UPLOAD");
        if (b.source_info.source !== "PULL_FROM_URL")
          return err(400, "invalid_params", "photos are only pulled from URLs (PULL_FROM_URL)");
        const images = b.source_info.photo_images;
        if (
          !Array.isArray(images) ||
          images.length < 1 ||
          images.length > 35 ||
          images.some((u) => typeof u !== "string")
        )
          return err(400, "invalid_params", "photo_images must list 1 to 35 URLs");
        const cover = b.source_info.photo_cover_index ?? -1;
        if (!Number.isInteger(cover) || cover < 0 || cover >= images.length)
          return err(400, "invalid_params", "photo_cover_index must index photo_images");
        if ((b.post_info?.title ?? "").length > 90)
          return err(400, "invalid_params", "title over 90 characters");
        if ((b.post_info?.description ?? "").length > 4000)
          return err(400, "invalid_params", "description over 4000 characters");
        urls = images as string[];
      }
      // PULL_FROM_URL only from a domain or URL prefix the developer verified
      // (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#pull_from_url):
      // anything else is `url_ownership_unverified`.
      const unverified = urls.find((u) => !tiktokVerified.some((p) => u.startsWith(p)));
      if (unverified)
        return err(
          403,
          "url_ownership_unverified",
          `the URL prefix of ${unverified} is not verified for this app`,
        );
      const publishId = `p_pub_url~v2.${++seq}`;
      tiktokPublishes.set(publishId, {
        upload,
        token,
        text: b.post_info?.description ?? b.post_info?.title ?? "",
        privacy,
        urls,
        video,
        checksLeft: state.processingChecks,
        result: null,
        postId: null,
      });
      const origin = new URL(req.url).origin;
      return okAnswer({
        publish_id: publishId,
        ...(upload
          ? { upload_url: `${origin}${PREFIX.tiktok}/tiktok-upload/${encodeURIComponent(publishId)}` }
          : {}),
      });
    }
    if (req.method === "POST" && path === "post/publish/status/fetch") {
      // https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status : PROCESSING_DOWNLOAD
      // while TikTok pulls the files, FAILED with fail_reason (photos: JPEG or WebP only,
      // `file_format_check_failed`), PUBLISH_COMPLETE with `publicaly_available_post_id` once public.
      const b = (await req.json().catch(() => ({}))) as { publish_id?: string };
      const p = tiktokPublishes.get(b.publish_id ?? "");
      if (!p || p.token !== token) return err(400, "invalid_publish_id", "publish_id does not exist");
      if (p.upload && p.upload.received < p.upload.size)
        return okAnswer({ status: "PROCESSING_UPLOAD", uploaded_bytes: p.upload.received });
      if (!p.result && p.upload) {
        const all = Buffer.concat(p.upload.chunks);
        const type = typeOfBytes(all);
        p.result =
          type === "video/mp4"
            ? { media: [{ contentType: type, size: all.byteLength }] }
            : { fail: "video_format_check_failed" };
      }
      if (!p.result) {
        const media: Fetched[] = [];
        let fail: string | null = null;
        for (const u of p.urls) {
          const got = await fetchMedia(u);
          if (typeof got === "string") fail = "picture_size_check_failed";
          else if (
            p.video
              ? got.contentType !== "video/mp4"
              : !["image/jpeg", "image/webp"].includes(got.contentType)
          )
            fail = p.video ? "video_format_check_failed" : "file_format_check_failed";
          else media.push(got);
          if (fail) break;
        }
        p.result = fail ? { fail } : { media };
      }
      if (p.checksLeft > 0) {
        p.checksLeft--;
        return okAnswer({ status: "PROCESSING_DOWNLOAD", uploaded_bytes: 0 });
      }
      if ("fail" in p.result) return okAnswer({ status: "FAILED", fail_reason: p.result.fail });
      // Ids are int64 numbers in the JSON, 19 digits like TikTok's: beyond 2^53, so the raw text is
      // written here (JSON.parse of it yields a neighbouring number).
      if (!p.postId) {
        p.postId = `7${String(++seq).padStart(18, "0")}`;
        published.set(p.postId, {
          platform: "tiktok",
          text: p.text,
          media: p.result.media,
          privacy: p.privacy,
        });
      }
      return new Response(
        `{"data":{"status":"PUBLISH_COMPLETE","publicaly_available_post_id":[${p.postId}]},"error":{"code":"ok","message":"","log_id":"${logId}"}}`,
        { status: 200, headers: { "content-type": "application/json" } },
      );
    }
    if (req.method === "POST" && path === "video/query") {
      // https://developers.tiktok.com/doc/tiktok-api-v2-video-query : scope video.list, `fields` in the
      // query, `filters.video_ids` (up to 20) in the body; the counts of the user's own videos.
      if (!hasScope(token, "video.list"))
        return err(
          401,
          "scope_not_authorized",
          "The user did not authorize the scope required for completing this request.",
        );
      const b = (await req.json().catch(() => ({}))) as { filters?: { video_ids?: string[] } };
      const ids = b.filters?.video_ids ?? [];
      if (ids.length < 1 || ids.length > 20)
        return err(400, "invalid_params", "filters.video_ids: 1 to 20 ids");
      const fields = (new URL(req.url).searchParams.get("fields") ?? "").split(",");
      const videos = ids
        .filter((id) => published.get(id)?.platform === "tiktok")
        .map((id) => {
          const m = metricsOf(id);
          const all: Record<string, unknown> = {
            id,
            view_count: m.views,
            like_count: m.likes,
            comment_count: m.comments,
            share_count: m.shares,
          };
          return Object.fromEntries(Object.entries(all).filter(([k]) => fields.includes(k)));
        });
      return okAnswer({ videos, cursor: 0, has_more: false });
    }
    return err(404, "invalid_params", "no such route");
  }

  // ---- OAuth endpoints, under /auth/<platform> + the platform's own paths -----------------------
  const AUTH_PATHS: Record<SocialPlatform, { authorize: string; token: string }> = {
    x: { authorize: "/i/oauth2/authorize", token: "/2/oauth2/token" },
    reddit: { authorize: "/api/v1/authorize", token: "/api/v1/access_token" },
    linkedin: { authorize: "/oauth/v2/authorization", token: "/oauth/v2/accessToken" },
    tiktok: { authorize: "/v2/auth/authorize/", token: "/v2/oauth/token/" },
    instagram: { authorize: "/oauth/authorize", token: "/oauth/access_token" },
    threads: { authorize: "/oauth/authorize", token: "/oauth/access_token" },
  };
  const oauthError = (status: number, error: string, description: string) =>
    json(status, { error, error_description: description });
  const s256 = (v: string) => new Bun.CryptoHasher("sha256").update(v).digest("base64url");

  async function auth(platform: SocialPlatform, req: Request, url: URL, path: string) {
    const meta = platform === "instagram" || platform === "threads";
    const paths = AUTH_PATHS[platform];
    const client = CLIENT(platform);
    if (req.method === "GET" && path === paths.authorize) {
      // The user's consent, granted at once: a redirect to redirect_uri with `code` and `state`.
      // Client id (`client_key` on TikTok), response_type=code, redirect_uri and state are required;
      // X and TikTok require PKCE S256 (https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code,
      // https://developers.tiktok.com/doc/login-kit-web). A refresh token comes back only for X's
      // `offline.access` scope and Reddit's `duration=permanent` (https://github.com/reddit-archive/reddit/wiki/OAuth2).
      const q = url.searchParams;
      const id = q.get(platform === "tiktok" ? "client_key" : "client_id");
      const redirectUri = q.get("redirect_uri");
      if (id !== client.id) return oauthError(400, "invalid_client", "unknown client");
      if (q.get("response_type") !== "code" || !redirectUri || !q.get("state"))
        return oauthError(400, "invalid_request", "response_type=code, redirect_uri and state are required");
      const needsPkce = platform === "x" || platform === "tiktok";
      if (needsPkce && (!q.get("code_challenge") || q.get("code_challenge_method") !== "S256"))
        return oauthError(400, "invalid_request", "code_challenge with S256 is required");
      const scopes = (q.get("scope") ?? "").split(/[ ,]+/).filter(Boolean);
      // LinkedIn grants only the scopes of the app's products; asking for another (r_member_social
      // without the restricted product) sends the user back with error=unauthorized_scope_error
      // (https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow#failed-requests).
      const unauthorized =
        platform === "linkedin" ? scopes.find((sc) => !app.linkedinScopes.has(sc)) : undefined;
      if (unauthorized) {
        const back = new URL(redirectUri);
        back.searchParams.set("error", "unauthorized_scope_error");
        back.searchParams.set(
          "error_description",
          `Scope "${unauthorized}" is not authorized for your application`,
        );
        back.searchParams.set("state", q.get("state")!);
        return new Response(null, { status: 302, headers: { location: back.toString() } });
      }
      const code = `code-${platform}-${++seq}`;
      codes.set(code, {
        platform,
        redirectUri,
        challenge: q.get("code_challenge"),
        used: false,
        user: meta ? metaUserId() : `user-${seq}`,
        scopes,
        // A refresh token only for X's offline.access, Reddit's duration=permanent, and on LinkedIn
        // for Marketing Developer Platform partners ("available for a limited set of partners",
        // https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens).
        refresh:
          platform === "x"
            ? scopes.includes("offline.access")
            : platform === "reddit"
              ? q.get("duration") === "permanent"
              : platform === "linkedin"
                ? app.linkedinPartner
                : true,
      });
      const back = new URL(redirectUri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state")!);
      return new Response(null, { status: 302, headers: { location: back.toString() } });
    }
    if (req.method === "POST" && path === paths.token) {
      if (platform === "reddit" && !REDDIT_UA.test(req.headers.get("user-agent") ?? ""))
        return json(429, { message: "Too Many Requests", error: 429 });
      // Client authentication: Basic for X's confidential clients and Reddit, form fields elsewhere.
      const form = new URLSearchParams(await req.text());
      const basic = (req.headers.get("authorization") ?? "").replace(/^Basic\s+/i, "");
      const [bid, bsecret] = basic ? Buffer.from(basic, "base64").toString().split(":") : [];
      const id = bid ?? form.get(platform === "tiktok" ? "client_key" : "client_id");
      const secret = bsecret ?? form.get("client_secret");
      if (id !== client.id || secret !== client.secret)
        return oauthError(401, "invalid_client", "client authentication failed");
      const grant = form.get("grant_type");
      if (grant === "authorization_code") {
        // A code is good once, for the redirect_uri it was issued to, with the PKCE verifier of its
        // challenge (RFC 6749 §4.1.3, RFC 7636 §4.6): a replayed code is `invalid_grant`.
        const c = codes.get(form.get("code") ?? "");
        if (!c || c.platform !== platform || c.used)
          return oauthError(400, "invalid_grant", "the code is invalid or was already used");
        c.used = true;
        if (c.redirectUri !== form.get("redirect_uri"))
          return oauthError(400, "invalid_grant", "redirect_uri mismatch");
        if (c.challenge && s256(form.get("code_verifier") ?? "") !== c.challenge)
          return oauthError(400, "invalid_grant", "code_verifier does not match the challenge");
        if (meta) {
          // The short-lived token answer: `user_id` a JSON number (written raw: it is beyond 2^53)
          // (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login#step-2--exchange-the-code-for-a-token).
          const t = issue(platform, c.user, 3600, false, c.scopes);
          return new Response(
            `{"access_token":"${t.accessToken}","user_id":${c.user},"permissions":${JSON.stringify(c.scopes)}}`,
            { status: 200, headers: { "content-type": "application/json" } },
          );
        }
        const t = issue(platform, c.user, LIFETIME_S[platform], c.refresh, c.scopes);
        return json(200, {
          access_token: t.accessToken,
          token_type: "bearer",
          expires_in: t.expiresIn,
          ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
          ...(platform === "tiktok" ? { open_id: c.user } : {}),
          scope: c.scopes.join(platform === "tiktok" ? "," : " "),
        });
      }
      if (grant === "refresh_token" && !meta) {
        await heldRefresh();
        // X and TikTok rotate refresh tokens: the one used is spent, a second use is refused
        // (https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token,
        // https://developers.tiktok.com/doc/oauth-user-access-token-management). Reddit and LinkedIn keep it.
        const rt = refreshTokens.get(form.get("refresh_token") ?? "");
        if (!rt || rt.platform !== platform || (ROTATES[platform] && rt.used))
          return oauthError(400, "invalid_grant", "the refresh token is invalid or was already used");
        rt.used = true;
        countRefresh(platform);
        const t = issue(platform, rt.user, LIFETIME_S[platform], ROTATES[platform], rt.scopes);
        return json(200, {
          access_token: t.accessToken,
          token_type: "bearer",
          expires_in: t.expiresIn,
          ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
        });
      }
      return oauthError(400, "unsupported_grant_type", `grant_type ${grant ?? "(none)"}`);
    }
    if (meta && req.method === "GET" && (path === "/access_token" || path === "/refresh_access_token")) {
      // Meta long-lived tokens: the short-lived token exchanged (`ig_exchange_token` / `th_exchange_token`,
      // with the app secret), then the long-lived one refreshing itself (`ig_refresh_token` /
      // `th_refresh_token`) while valid and at least 24 hours old
      // (https://developers.facebook.com/docs/instagram-platform/reference/refresh_access_token,
      // https://developers.facebook.com/docs/threads/get-started/long-lived-tokens).
      const q = url.searchParams;
      const prefix = platform === "instagram" ? "ig" : "th";
      const token = q.get("access_token") ?? "";
      const t = issued.get(token);
      const refuse = (m: string) => graphError(400, 190, m);
      if (!t || t.platform !== platform || isExpired(token)) return refuse("Error validating access token");
      if (path === "/access_token") {
        if (q.get("grant_type") !== `${prefix}_exchange_token` || q.get("client_secret") !== client.secret)
          return graphError(400, 100, "grant_type and client_secret are required");
        const long = issue(platform, t.user, LIFETIME_S[platform], false, t.scopes);
        return json(200, {
          access_token: long.accessToken,
          token_type: "bearer",
          expires_in: long.expiresIn,
        });
      }
      if (q.get("grant_type") !== `${prefix}_refresh_token`)
        return graphError(400, 100, "grant_type is required");
      if (now() - t.issuedAt < 86_400_000)
        return graphError(400, 100, "the token must be at least 24 hours old");
      await heldRefresh();
      countRefresh(platform);
      const renewed = issue(platform, t.user, LIFETIME_S[platform], false, t.scopes);
      return json(200, {
        access_token: renewed.accessToken,
        token_type: "bearer",
        expires_in: renewed.expiresIn,
      });
    }
    return json(404, { error: "not_found" });
  }

  const PREFIX: Record<SocialPlatform, string> = {
    instagram: "/instagram",
    threads: "/threads",
    x: "/x/2",
    linkedin: "/linkedin",
    reddit: "/reddit",
    tiktok: "/tiktok/v2",
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname.startsWith("/media/")) {
        const file = hosted.get(url.pathname.slice("/media/".length));
        return file
          ? new Response(file.bytes as Uint8Array<ArrayBuffer>, {
              headers: { "content-type": file.contentType },
            })
          : new Response("not found", { status: 404 });
      }
      if (url.pathname.startsWith("/graph-facebook/")) {
        // graph.facebook.com serves Facebook Login tokens; an Instagram Login token is not one of them
        // ("two Meta host URLs", https://developers.facebook.com/docs/instagram-platform/overview#instagram-api-with-instagram-login).
        const token = (req.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
        if (issued.get(token)?.platform === "instagram")
          return graphError(400, 190, "Invalid OAuth access token - Cannot parse access token");
        return graphError(400, 100, "Unsupported request");
      }
      const authFor = /^\/auth\/(\w+)(\/.*)$/.exec(url.pathname);
      if (authFor && authFor[1]! in PREFIX) return auth(authFor[1] as SocialPlatform, req, url, authFor[2]!);
      const platform = (Object.keys(PREFIX) as SocialPlatform[]).find((p) =>
        url.pathname.startsWith(`${PREFIX[p]}/`),
      );
      if (!platform) return json(404, { error: "unknown platform" });
      const token = (req.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
      requests.push({
        platform,
        method: req.method,
        path: url.pathname.slice(PREFIX[platform].length) + url.search,
        at: Date.now(),
        token,
      });
      const rule = rules.get(platform);
      if (rule && rule.count > 0) {
        rule.count--;
        if (rule.status === 429) {
          const headers: Record<string, string> = { "retry-after": String(rule.retryAfterS ?? 1) };
          if (platform === "x")
            headers["x-rate-limit-reset"] = String(Math.ceil(Date.now() / 1000 + (rule.retryAfterS ?? 1)));
          if (platform === "reddit") headers["x-ratelimit-reset"] = String(rule.retryAfterS ?? 1);
          return json(
            429,
            platform === "instagram" || platform === "threads"
              ? {
                  error: {
                    message: "(#4) Application request limit reached",
                    type: "OAuthException",
                    code: 4,
                  },
                }
              : { title: "Too Many Requests", status: 429, message: "Too Many Requests" },
            headers,
          );
        }
        return json(rule.status, { error: { message: "Service temporarily unavailable", code: 2 } });
      }
      inFlight.set(platform, (inFlight.get(platform) ?? 0) + 1);
      maxInFlight.set(platform, Math.max(maxInFlight.get(platform) ?? 0, inFlight.get(platform)!));
      try {
        if (opts.latencyMs) await Bun.sleep(opts.latencyMs);
        const parts = url.pathname
          .slice(PREFIX[platform].length + 1)
          .replace(/\/$/, "")
          .split("/");
        if (platform === "instagram" || platform === "threads")
          return await graph(platform, req, url, parts, token);
        if (platform === "x") return await x(req, url, parts, token);
        if (platform === "linkedin") return await linkedin(req, url, parts, token);
        if (platform === "reddit") return await reddit(req, url, parts, token);
        return await tiktok(req, parts, token);
      } finally {
        inFlight.set(platform, inFlight.get(platform)! - 1);
      }
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  tiktokVerified.push(`${base}/media/`);
  const bases = Object.fromEntries(
    (Object.keys(PREFIX) as SocialPlatform[]).map((p) => [p, `${base}${PREFIX[p]}`]),
  ) as Record<SocialPlatform, string>;
  return {
    bases,
    /** The address prefix of the files `host` serves (verified with TikTok in the fake). */
    mediaPrefix: `${base}/media/`,
    /** The versioned Graph bases (default versions), for tests that call the fake directly. */
    graphBases: { instagram: `${bases.instagram}/v25.0`, threads: `${bases.threads}/v1.0` },
    /** SOCIAL_API_BASE_<PLATFORM> settings pointing at this fake. */
    env: Object.fromEntries(
      Object.entries(bases).map(([p, u]) => [`SOCIAL_API_BASE_${p.toUpperCase()}`, u]),
    ) as Record<string, string>,
    /** SOCIAL_<PLATFORM>_CLIENT_ID/SECRET and SOCIAL_AUTH_BASE_<PLATFORM> pointing at this fake. */
    oauthEnv: Object.fromEntries(
      (Object.keys(PREFIX) as SocialPlatform[])
        .flatMap((p) => [
          [`SOCIAL_${p.toUpperCase()}_CLIENT_ID`, CLIENT(p).id],
          [`SOCIAL_${p.toUpperCase()}_CLIENT_SECRET`, CLIENT(p).secret],
          [`SOCIAL_AUTH_BASE_${p.toUpperCase()}`, `${base}/auth/${p}`],
        ])
        .concat([["SOCIAL_REDDIT_DEVELOPER", "fake_dev"]]),
    ) as Record<string, string>,
    /** Tokens as the platform would issue them after a consent (expiring by the fake's clock). */
    issueTokens: (platform: SocialPlatform, scopes: string[] | null = null) => {
      const meta = platform === "instagram" || platform === "threads";
      const user = meta ? metaUserId() : `user-${++seq}`;
      const t = issue(platform, user, LIFETIME_S[platform], true, scopes);
      return { ...t, user, expiresAt: new Date(now() + t.expiresIn * 1000) };
    },
    /** Sets the fake platforms' clock (tokens expire by it). */
    setNow: (at: Date) => {
      state.offsetMs = at.getTime() - Date.now();
    },
    /** Refresh-token grants the token endpoints answered, by platform. */
    refreshCount: (platform: SocialPlatform) => refreshGrants.get(platform) ?? 0,
    /**
     * Holds the answer to every refresh request (any platform) from now until `release()`, so a test
     * can make two renewals meet for certain; `arrived` counts the requests that reached the hold.
     */
    holdRefresh: () => {
      let open!: () => void;
      const gate = new Promise<void>((r) => {
        open = r;
      });
      const hold = { arrived: 0, gate };
      refreshHold = hold;
      return {
        get arrived() {
          return hold.arrived;
        },
        release: () => {
          if (refreshHold === hold) refreshHold = null;
          open();
        },
      };
    },
    requests,
    maxInFlight,
    /** The text a post was published with (by the platform's post id). */
    publishedText: (postId: string) => published.get(postId)?.text,
    /** What a post was published with: text and the files the platform fetched or was sent. */
    publication: (postId: string) => published.get(postId),
    /** Serves `bytes` at a URL of this fake (a file a platform can fetch). */
    host: (bytes: Uint8Array, contentType: string) => {
      const id = `${++seq}`;
      hosted.set(id, { bytes, contentType });
      return `${base}/media/${id}`;
    },
    /** How media URLs are fetched (default `fetch`): a test app can answer its own delivery route. */
    setMediaFetcher: (f: (url: string) => Promise<Response>) => {
      state.fetchMedia = f;
    },
    /** Status checks that answer "not ready yet" before containers, uploads and publishes are ready. */
    setProcessingChecks: (n: number) => {
      state.processingChecks = n;
    },
    /** The privacy levels TikTok's creator_info/query lists for this token. */
    setTikTokPrivacy: (token: string, levels: string[]) => tiktokPrivacy.set(token, levels),
    /** Verifies a URL prefix with TikTok (as a developer does for the service's PUBLIC_BASE_URL). */
    verifyTikTokUrlPrefix: (prefix: string) => tiktokVerified.push(prefix),
    /** The host standing in for graph.facebook.com (Facebook Login), where Instagram Login tokens fail. */
    facebookGraphBase: `${base}/graph-facebook`,
    /** Grants the app a restricted LinkedIn scope (as LinkedIn does after the product's review). */
    grantLinkedinScope: (scope: string) => app.linkedinScopes.add(scope),
    /** The app is a LinkedIn Marketing Developer Platform partner: refresh tokens are issued. */
    setLinkedinPartner: (partner: boolean) => {
      app.linkedinPartner = partner;
    },
    /** TikTok audited the app: public privacy levels are accepted. */
    setTikTokAudited: (audited: boolean) => {
      app.tiktokAudited = audited;
    },
    /** The scopes a token was issued with (null: not issued after a consent). */
    scopesOf: (token: string) => issued.get(token)?.scopes ?? null,
    /** Every privacy level TikTok knows. */
    tiktokPrivacyLevels: ALL_TIKTOK_PRIVACY,
    /** Sets what a post reports (by the platform's post id). */
    setMetrics: (postId: string, m: Partial<FakeMetrics>) =>
      metrics.set(postId, { ...DEFAULT_METRICS, ...metricsOf(postId), ...m }),
    /** The token lacks `permission` (insights, r_member_social) at the platform. */
    deny: (token: string, permission: string) => denied.add(`${token}:${permission}`),
    /** The token is invalid or expired at every platform. */
    expire: (token: string) => expired.add(token),
    /** The token belongs to an X app on the free tier. */
    freeTier: (token: string) => xFreeTier.add(token),
    /** The next `count` requests to `platform` answer `status` (429 with retry-after `retryAfterS`). */
    failNext: (platform: SocialPlatform, count: number, status = 429, retryAfterS = 1) =>
      rules.set(platform, { count, status, retryAfterS }),
    close: () => server.stop(true),
  };
}

/** The fake's handle. */
export type FakePlatforms = ReturnType<typeof startFakePlatforms>;
