/**
 * Reddit on the fake: the User-Agent rule, the token's user, the media upload lease and its storage,
 * submit (self, image, video with a poster), the user's submitted listing and /api/info.
 */
import {
  type FakeState,
  type Fetched,
  hasScope,
  isExpired,
  json,
  metricsOf,
  nextSeq,
  now,
  type PlatformCall,
  typeOfBytes,
} from "./state.ts";

type Lease = { token: string; mimetype: string; uploaded: Fetched | null };

/** The shared state, the upload leases (by key) and each user's submitted posts (newest first). */
type RedditCtx = {
  s: FakeState;
  leases: Map<string, Lease>;
  submitted: Map<string, Record<string, unknown>[]>;
};

/**
 * Reddit refuses clients without a User-Agent of its form `<platform>:<app ID>:<version string>
 * (by /u/<reddit username>)` (https://github.com/reddit-archive/reddit/wiki/API#rules).
 */
export const REDDIT_UA = /^[\w.-]+:[\w.-]+:[\w.-]+ \(by \/u\/[\w-]{3,20}\)$/;

/** The Reddit handler (`parts` below the Reddit prefix, the lease storage included). */
export function fakeReddit(s: FakeState): (call: PlatformCall) => Promise<Response> {
  const ctx: RedditCtx = { s, leases: new Map(), submitted: new Map() };
  return (call) => reddit(ctx, call);
}

async function reddit(ctx: RedditCtx, c: PlatformCall): Promise<Response> {
  const { req, url, parts, token } = c;
  if (parts[0] === "media-upload") return leaseUpload(ctx, c);
  // The User-Agent rule (REDDIT_UA above).
  if (!REDDIT_UA.test(req.headers.get("user-agent") ?? ""))
    return json(429, { message: "Too Many Requests", error: 429 });
  if (isExpired(ctx.s, token)) return json(401, { message: "Unauthorized", error: 401 });
  const path = parts.join("/");
  if (req.method === "GET" && path === "api/v1/me") {
    // https://www.reddit.com/dev/api/#GET_api_v1_me
    const who = ctx.s.issued.get(token);
    if (!who) return json(401, { message: "Unauthorized", error: 401 });
    return json(200, { name: who.user, id: who.user });
  }
  if (req.method === "POST" && path === "api/media/asset.json") return lease(ctx, c);
  if (req.method === "POST" && path === "api/submit") return submit(ctx, c);
  if (req.method === "GET" && parts[0] === "user" && parts[2] === "submitted")
    return submittedListing(ctx, c);
  if (req.method === "GET" && path === "api/info") return info(ctx, url.searchParams.get("id") ?? "");
  return json(404, { message: "Not Found", error: 404 });
}

/**
 * The lease's storage takes a multipart POST with every lease field and the file last (PRAW's
 * `_upload_media`, https://github.com/praw-dev/praw/blob/main/praw/models/reddit/subreddit.py).
 */
async function leaseUpload(ctx: RedditCtx, c: PlatformCall): Promise<Response> {
  const { req, url, parts } = c;
  if (req.method !== "POST") return new Response(null, { status: 405 });
  const form = await req.formData().catch(() => null);
  const key = form?.get("key");
  const lease = typeof key === "string" ? ctx.leases.get(key) : undefined;
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

/**
 * The upload lease: `filepath` and `mimetype` (an image type, or video/mp4 for submit_video) are
 * required (PRAW, same file).
 */
async function lease(ctx: RedditCtx, c: PlatformCall): Promise<Response> {
  const form = new URLSearchParams(await c.req.text());
  const mimetype = form.get("mimetype") ?? "";
  if (!form.get("filepath") || !["image/jpeg", "image/png", "image/gif", "video/mp4"].includes(mimetype))
    return json(400, {
      json: { errors: [["BAD_IMAGE", "filepath and an image mimetype are required", "mimetype"]] },
    });
  const n = nextSeq(ctx.s);
  const key = `rte_images/${n}/${form.get("filepath")}`;
  ctx.leases.set(key, { token: c.token, mimetype, uploaded: null });
  const origin = c.url.origin + c.url.pathname.slice(0, c.url.pathname.indexOf("/api/"));
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
      asset_id: `a${n}`,
      processing_state: "incomplete",
      websocket_url: "wss://example.invalid/x",
    },
  });
}

/**
 * https://www.reddit.com/dev/api/#POST_api_submit : a title (1–300 characters); kind self with
 * text, or link/image with a url; an image must be one uploaded through a lease of this user.
 */
async function submit(ctx: RedditCtx, c: PlatformCall): Promise<Response> {
  const form = new URLSearchParams(await c.req.text());
  const title = form.get("title") ?? "";
  const sr = form.get("sr") ?? "";
  if (!title || title.length > 300)
    return json(200, { json: { errors: [["BAD_TITLE", "title must be 1 to 300 characters", "title"]] } });
  // Reddit's own rate limit on submitting is not an HTTP status: a 200 whose json.errors holds
  // ["RATELIMIT", "you are doing that too much. try again in 9 minutes.", "ratelimit"]
  // (https://praw.readthedocs.io/en/stable/getting_started/ratelimits.html); nothing is posted.
  const limit = ctx.s.redditRatelimit;
  if (limit && limit.count > 0) {
    limit.count--;
    return json(200, { json: { errors: [["RATELIMIT", limit.message, "ratelimit"]] } });
  }
  const kind = form.get("kind");
  const id = nextSeq(ctx.s).toString(36).padStart(6, "a");
  if (kind === "image" || kind === "video") return submitMedia(ctx, c, { form, kind, id });
  if (kind !== "self") return json(200, { json: { errors: [["INVALID_OPTION", "kind", "kind"]] } });
  ctx.s.published.set(`t3_${id}`, { platform: "reddit", text: form.get("text") ?? "", media: [] });
  // A self post is on its author's submitted listing too, newest first, with its text (`selftext`)
  // and its time (`created_utc`): what a cut-off try is looked up by (decision 1497).
  listSubmitted(ctx, sr.replace(/^u_/, ""), {
    id,
    name: `t3_${id}`,
    title,
    is_self: true,
    selftext: form.get("text") ?? "",
    permalink: `/r/${sr}/comments/${id}/post/`,
  });
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

/** kind=image or kind=video: the url (and a video's poster) uploaded through leases of this user. */
function submitMedia(
  ctx: RedditCtx,
  c: PlatformCall,
  o: { form: URLSearchParams; kind: "image" | "video"; id: string },
): Response {
  const { form, kind, id } = o;
  const title = form.get("title") ?? "";
  const sr = form.get("sr") ?? "";
  const owner = sr.replace(/^u_/, "");
  const leaseOf = (u: string) =>
    ctx.leases.get(u.slice(u.indexOf("/media-upload/") + "/media-upload/".length));
  const isVideo = (l: Lease | undefined) => l?.uploaded?.contentType === "video/mp4";
  const lease = leaseOf(form.get("url") ?? "");
  if (!lease || lease.token !== c.token || !lease.uploaded || isVideo(lease) !== (kind === "video"))
    return json(200, {
      json: { errors: [["NO_URL", `the url is not an uploaded ${kind} of this user`, "url"]] },
    });
  // kind=video goes with `video_poster_url`, an image uploaded through a lease too (PRAW's
  // submit_video always sends it: its own logo when the caller gives no thumbnail).
  if (kind === "video") {
    const poster = leaseOf(form.get("video_poster_url") ?? "");
    if (!poster || poster.token !== c.token || !poster.uploaded || isVideo(poster))
      return json(200, {
        json: { errors: [["NO_URL", "video_poster_url is not an uploaded image", "video_poster_url"]] },
      });
  }
  ctx.s.published.set(`t3_${id}`, { platform: "reddit", text: title, media: [lease.uploaded] });
  listSubmitted(ctx, owner, {
    id,
    name: `t3_${id}`,
    title,
    is_self: false,
    permalink: `/r/${sr}/comments/${id}/post/`,
  });
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

/** Puts a post first on its author's submitted listing, stamped with the fake's clock (`created_utc`). */
function listSubmitted(ctx: RedditCtx, owner: string, post: Record<string, unknown>): void {
  const list = ctx.submitted.get(owner) ?? [];
  list.unshift({ ...post, created_utc: now(ctx.s) / 1000 });
  ctx.submitted.set(owner, list);
}

/**
 * The user's submitted posts, newest first, at most `limit` (default 25, at most 100)
 * (https://www.reddit.com/dev/api/#GET_user_{username}_submitted, a listing's `limit`).
 */
function submittedListing(ctx: RedditCtx, c: PlatformCall): Response {
  // The submitted listing is under the `history` scope (https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted);
  // a token without it is refused 403 (insufficient_scope).
  if (!hasScope(ctx.s, c.token, "history"))
    return json(403, { message: "Forbidden", error: 403, reason: "insufficient_scope" });
  const limit = Math.min(100, Math.max(1, Number(c.url.searchParams.get("limit") ?? 25) || 25));
  const list = (ctx.submitted.get(decodeURIComponent(c.parts[1] ?? "")) ?? []).slice(0, limit);
  // A listing's posts carry their figures, as /api/info's do.
  const withFigures = list.map((d) => {
    const m = metricsOf(ctx.s, String(d.name));
    return { ...d, score: m.score, ups: m.score, num_comments: m.comments, upvote_ratio: m.upvoteRatio };
  });
  return json(200, {
    kind: "Listing",
    data: { children: withFigures.map((d) => ({ kind: "t3", data: d })) },
  });
}

function info(ctx: RedditCtx, name: string): Response {
  const m = metricsOf(ctx.s, name);
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
