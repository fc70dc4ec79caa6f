import type { Clock } from "@site/config";
import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  parseRetryAfter,
} from "@site/domain/social";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";

/** Reddit's OAuth API's real address. */
export const REDDIT_API_BASE = "https://oauth.reddit.com";
const USER_AGENT = "server:site-content-api:1.0 (social performance collector)";

/** Reddit answers 429 with `retry-after` or `x-ratelimit-reset` (seconds until the window resets). */
function redditError(a: ApiAnswer): PlatformError {
  const reset = Number(a.headers.get("x-ratelimit-reset"));
  const retry =
    parseRetryAfter(a.headers.get("retry-after")) ??
    (Number.isFinite(reset) && reset > 0 ? reset * 1000 : null);
  const b = (a.body ?? {}) as { message?: string; error?: unknown };
  return statusError(a, `reddit: ${b.message ?? `HTTP ${a.status}`}`, retry);
}

/**
 * Reddit (forum): a self post through `POST /api/submit` on the account's profile, metrics from
 * `GET /api/info?id=t3_…`: score is reported as likes, `num_comments` as comments, the upvote ratio
 * in `extra`. Reddit exposes no view, share or save counts.
 */
export function redditAdapter(clock: Clock, base = REDDIT_API_BASE): PlatformAdapter {
  const headers = (a: AdapterAccount) => ({
    authorization: `bearer ${a.accessToken}`,
    "user-agent": USER_AGENT,
  });
  return {
    platform: "reddit",
    async publish(account, text) {
      const title = (text.split("\n")[0] ?? text).slice(0, 300);
      const a = await callPlatform(endpoint(base, "/api/submit"), {
        method: "POST",
        headers: { ...headers(account), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          api_type: "json",
          kind: "self",
          sr: `u_${account.accountId}`,
          title,
          text,
        }),
      });
      if (!ok(a)) throw redditError(a);
      const json = (
        a.body as { json?: { errors?: unknown[][]; data?: { name?: string; url?: string } } } | null
      )?.json;
      if (json?.errors?.length)
        throw new PlatformError("rejected", `reddit: ${json.errors.map((e) => e.join(" ")).join("; ")}`);
      if (!json?.data?.name || !json.data.url)
        throw new PlatformError("rejected", "reddit: no post in the answer");
      return { platformPostId: json.data.name, url: json.data.url, publishedAt: clock.now() };
    },
    async readMetrics(account, target) {
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
      return buildReading(
        { likes: num(post.score), comments: num(post.num_comments) },
        { likes: "platform_error", comments: "platform_error" },
        { upvoteRatio: num(post.upvote_ratio) ?? null },
      );
    },
  };
}
