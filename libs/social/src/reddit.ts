import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  parseRetryAfter,
  platformMediaViolation,
  redditRatelimitMs,
} from "@site/domain/social";
import { pollUntil } from "./_graph.ts";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";

/** Reddit's OAuth API's real address. */
export const REDDIT_API_BASE = "https://oauth.reddit.com";
/** The version named in the User-Agent. */
const APP_VERSION = "1.0";

/**
 * Reddit's User-Agent form `<platform>:<app ID>:<version string> (by /u/<reddit username>)`; a generic
 * or missing one is throttled or refused (https://github.com/reddit-archive/reddit/wiki/API#rules).
 * The app id is the OAuth client id; the user is SOCIAL_REDDIT_DEVELOPER (the app's developer), else the
 * account the call is made for, else the app id itself (decision 1015).
 */
export function redditUserAgent(
  clientId: string | null,
  developer: string | null | undefined,
  account: string | null,
): string {
  const app = (clientId ?? "site-content-api").replace(/[^\w.-]/g, "");
  const by = (developer ?? account ?? app).replace(/[^\w-]/g, "");
  return `server:${app}:${APP_VERSION} (by /u/${by})`;
}

/** Reddit answers 429 with `retry-after` or `x-ratelimit-reset` (seconds until the window resets). */
function redditError(a: ApiAnswer): PlatformError {
  const reset = Number(a.headers.get("x-ratelimit-reset"));
  const retry =
    parseRetryAfter(a.headers.get("retry-after")) ??
    (Number.isFinite(reset) && reset > 0 ? reset * 1000 : null);
  const b = (a.body ?? {}) as { message?: string; error?: unknown };
  return statusError(a, `reddit: ${b.message ?? `HTTP ${a.status}`}`, retry);
}

type Lease = {
  args?: { action?: string; fields?: { name?: string; value?: string }[] };
  asset?: { asset_id?: string };
};
type Listing = { data?: { children?: { data?: Record<string, unknown> }[] } };

/**
 * The target id of a media post published before Reddit listed it: the title's first 80 characters
 * after this prefix (decision 1015). Its metrics are read once the account's listing shows the post.
 */
export const REDDIT_PENDING_PREFIX = "submitted:";

/** A Reddit post's reading: score as likes, `num_comments` as comments, the upvote ratio in `extra`. */
function redditReading(post: Record<string, unknown>) {
  return buildReading(
    { likes: num(post.score), comments: num(post.num_comments) },
    { likes: "platform_error", comments: "platform_error" },
    { upvoteRatio: num(post.upvote_ratio) ?? null },
  );
}

/** A permalink as an address (the listing gives it relative to the site). */
const permalinkUrl = (permalink: string) =>
  permalink.startsWith("http") ? permalink : `https://www.reddit.com${permalink}`;

/**
 * Reddit (forum): a self post through `POST /api/submit` on the account's profile, or an image post: an
 * upload lease from `POST /api/media/asset.json`, the file posted to the lease's storage with its
 * fields, then `kind=image` with the uploaded file's address (the flow of Reddit's own clients, see
 * PRAW's `Subreddit._upload_media`, https://github.com/praw-dev/praw/blob/main/praw/models/reddit/subreddit.py);
 * a video the same way (mimetype video/mp4) with its poster image uploaded too, then `kind=video` with
 * `url` and `video_poster_url` (PRAW's `Subreddit.submit_video`, same file);
 * the new post is then found on the account's `submitted` listing. Metrics from
 * `GET /api/info?id=t3_…`: score is reported as likes, `num_comments` as comments, the upvote ratio in
 * `extra`. Reddit exposes no view, share or save counts.
 */
export function redditAdapter(opts: AdapterOptions, base = REDDIT_API_BASE): PlatformAdapter {
  const headers = (a: AdapterAccount) => ({
    authorization: `bearer ${a.accessToken}`,
    "user-agent": opts.redditUserAgent(a.accountId),
  });
  const form = (account: AdapterAccount, path: string, fields: Record<string, string>) =>
    callPlatform(endpoint(base, path), {
      method: "POST",
      headers: { ...headers(account), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  /** Uploads a file through an upload lease; answers the uploaded file's address on Reddit's storage. */
  async function uploadFile(
    account: AdapterAccount,
    m: { contentType: string; read(): Promise<Uint8Array<ArrayBuffer>> },
  ): Promise<string> {
    const ext = m.contentType.split("/")[1] ?? "jpg";
    const name = m.contentType.startsWith("video/") ? "video" : "image";
    const lease = await form(account, "/api/media/asset.json", {
      filepath: `${name}.${ext === "jpeg" ? "jpg" : ext}`,
      mimetype: m.contentType,
    });
    const args = (lease.body as Lease | null)?.args;
    if (!ok(lease) || !args?.action || !args.fields) throw redditError(lease);
    const action = args.action.startsWith("//") ? `https:${args.action}` : args.action;
    const body = new FormData();
    let key = "";
    for (const f of args.fields) {
      if (!f.name || f.value === undefined) continue;
      body.append(f.name, f.value);
      if (f.name === "key") key = f.value;
    }
    body.append("file", new Blob([await m.read()], { type: m.contentType }), `${name}.${ext}`);
    const put = await callPlatform(action, { method: "POST", body });
    if (!ok(put))
      throw new PlatformError("rejected", `reddit: the media upload was refused (HTTP ${put.status})`);
    return `${action.replace(/\/$/, "")}/${key}`;
  }
  return {
    platform: "reddit",
    async publish(account, post) {
      const violation = platformMediaViolation("reddit", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const title = (post.text.split("\n")[0] ?? post.text).slice(0, 300);
      const file = post.media[0];
      // A video goes with its poster (`video_poster_url`), uploaded the same way (PRAW's submit_video).
      const video = file?.kind === "video";
      if (video && !file.poster)
        throw new PlatformError("rejected", "reddit: a video needs its poster image");
      const mediaUrl = file ? await uploadFile(account, file) : null;
      const posterUrl = video && file.poster ? await uploadFile(account, file.poster) : null;
      const a = await form(account, "/api/submit", {
        api_type: "json",
        sr: `u_${account.accountId}`,
        title,
        ...(mediaUrl && video
          ? { kind: "video", url: mediaUrl, video_poster_url: posterUrl! }
          : mediaUrl
            ? { kind: "image", url: mediaUrl }
            : { kind: "self", text: post.text }),
      });
      if (!ok(a)) throw redditError(a);
      const json = (
        a.body as { json?: { errors?: unknown[][]; data?: { name?: string; url?: string } } } | null
      )?.json;
      if (json?.errors?.length) {
        const words = `reddit: ${json.errors.map((e) => e.join(" ")).join("; ")}`;
        // Reddit's own rate limit comes inside a 200 ("RATELIMIT", "you are doing that too much. try again
        // in 9 minutes."): nothing was posted, and the text says when to try again, read as PRAW reads
        // it (https://praw.readthedocs.io/en/stable/getting_started/ratelimits.html).
        const limit = json.errors.find((e) => e[0] === "RATELIMIT");
        if (limit)
          throw new PlatformError("rate_limited", words, {
            status: a.status,
            retryAfterMs: redditRatelimitMs(String(limit[1] ?? "")),
          });
        throw new PlatformError("rejected", words);
      }
      if (json?.data?.name && json.data.url)
        return { platformPostId: json.data.name, url: json.data.url, publishedAt: opts.clock.now() };
      if (!mediaUrl) throw new PlatformError("rejected", "reddit: no post in the answer");
      // An image or video post is created once Reddit processed the file; its id is not in the answer. It is read
      // from the account's submitted listing, which needs the `history` scope that connect asks for
      // (https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted). From here on Reddit has
      // the post: a listing that cannot be read never makes the target "failed" (a retry would post it
      // twice); the target keeps the profile's submitted page and a pending id instead (decision 1015).
      const submittedPage = `https://www.reddit.com/user/${encodeURIComponent(account.accountId)}/submitted/`;
      const found = await pollUntil(opts.poll, "reddit image post", async () => {
        const match = await findSubmitted(account, (d) => d.is_self === false && d.title === title);
        return match ? { name: String(match.name), permalink: String(match.permalink ?? "") } : null;
      }).catch(() => ({ name: null, permalink: submittedPage }));
      if (!found.name)
        return {
          platformPostId: `${REDDIT_PENDING_PREFIX}${title.slice(0, 80)}`,
          url: submittedPage,
          publishedAt: opts.clock.now(),
        };
      return {
        platformPostId: found.name,
        url: permalinkUrl(found.permalink),
        publishedAt: opts.clock.now(),
      };
    },
    /**
     * A cut-off try's post (decision 1497): the account's submitted listing, newest first
     * (`GET /user/{username}/submitted?sort=new&limit=100`, scope `history`,
     * https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted): a post since `since`
     * (`created_utc`) with the title publish gives it and, for a self post, exactly its text
     * (`selftext`); a media post is matched by its title.
     */
    async findPublished(account, post) {
      const title = (post.text.split("\n")[0] ?? post.text).slice(0, 300);
      const since = post.since.getTime() / 1000;
      const hit = await findSubmitted(
        account,
        (d) =>
          d.title === title &&
          (typeof d.created_utc !== "number" || d.created_utc >= since) &&
          (d.is_self !== true || d.selftext === post.text),
        100,
      );
      if (!hit?.name) return null;
      return {
        platformPostId: String(hit.name),
        url: permalinkUrl(String(hit.permalink ?? "")),
        publishedAt:
          typeof hit.created_utc === "number" ? new Date(hit.created_utc * 1000) : opts.clock.now(),
      };
    },
    async readMetrics(account, target) {
      if (target.platformPostId.startsWith(REDDIT_PENDING_PREFIX)) {
        // Published before Reddit listed it: find it on the listing now (the newest post of that title),
        // read its figures there, and give the collector its real id (decision 1015). Not listed yet:
        // a transient failure, tried again at the next pass. Without `history`: permission_missing.
        const start = target.platformPostId.slice(REDDIT_PENDING_PREFIX.length);
        const post = await findSubmitted(
          account,
          (d) => d.is_self === false && typeof d.title === "string" && d.title.slice(0, 80) === start,
        );
        if (!post)
          throw new PlatformError("transient", "reddit: the post is not on the submitted listing yet");
        return {
          ...redditReading(post),
          found: { platformPostId: String(post.name), url: permalinkUrl(String(post.permalink ?? "")) },
        };
      }
      const a = await callPlatform(
        endpoint(base, "/api/info", { id: target.platformPostId, raw_json: "1" }),
        {
          headers: headers(account),
        },
      );
      if (!ok(a)) throw redditError(a);
      const post = (a.body as { data?: { children?: { data?: Record<string, unknown> }[] } } | null)?.data
        ?.children?.[0]?.data;
      if (!post) throw new PlatformError("rejected", "reddit: post not found", { status: a.status });
      return redditReading(post);
    },
  };

  /**
   * The newest post on the account's submitted listing (newest first, `limit` up to 100) that passes
   * `match`, or null. The listing needs the `history` scope
   * (https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted).
   */
  async function findSubmitted(
    account: AdapterAccount,
    match: (d: Record<string, unknown>) => boolean,
    limit = 10,
  ): Promise<Record<string, unknown> | null> {
    const l = await callPlatform(
      endpoint(base, `/user/${encodeURIComponent(account.accountId)}/submitted`, {
        sort: "new",
        limit: String(limit),
        raw_json: "1",
      }),
      { headers: headers(account) },
    );
    if (!ok(l)) throw redditError(l);
    return (
      ((l.body as Listing | null)?.data?.children ?? []).map((c) => c.data ?? {}).find((d) => match(d)) ??
      null
    );
  }
}
