import type { SocialPlatform } from "@site/domain/social";

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

type Rule = { count: number; status: number; retryAfterS?: number };

/**
 * Fake platform servers on 127.0.0.1 (one Bun server, one path prefix per platform) answering like the
 * real APIs: Graph API errors for Instagram and Threads, X API v2 problems, LinkedIn REST errors,
 * Reddit listings, TikTok's `{data, error}`; with permission errors, expired tokens and 429s on demand.
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
  const published = new Map<string, { platform: SocialPlatform; text: string }>();

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    Response.json(body, { status, headers });
  const metricsOf = (id: string) => metrics.get(id) ?? DEFAULT_METRICS;
  const graphError = (status: number, code: number, message: string, type = "OAuthException") =>
    json(status, { error: { message, type, code, fbtrace_id: "AbCdEf123" } });

  function graph(platform: "instagram" | "threads", req: Request, url: URL, parts: string[], token: string) {
    if (expired.has(token))
      return graphError(400, 190, "Error validating access token: Session has expired.");
    const [id, edge] = parts;
    if (req.method === "POST" && (edge === "media" || edge === "threads")) {
      const text = url.searchParams.get(platform === "instagram" ? "caption" : "text") ?? "";
      const cid = `${platform}_c${++seq}`;
      published.set(cid, { platform, text });
      return json(200, { id: cid });
    }
    if (req.method === "POST" && (edge === "media_publish" || edge === "threads_publish")) {
      const container = published.get(url.searchParams.get("creation_id") ?? "");
      if (!container) return graphError(400, 100, "Invalid parameter", "OAuthException");
      const mid = `${platform === "instagram" ? "1790" : "1810"}${++seq}`;
      published.set(mid, container);
      return json(200, { id: mid });
    }
    if (req.method === "GET" && edge === "insights") {
      const perm = platform === "instagram" ? "instagram_manage_insights" : "threads_manage_insights";
      if (denied.has(`${token}:${perm}`))
        return graphError(
          platform === "instagram" ? 400 : 403,
          10,
          "(#10) Application does not have permission for this action",
          platform === "instagram" ? "OAuthException" : "THApiException",
        );
      const m = metricsOf(id!);
      const names = (url.searchParams.get("metric") ?? "").split(",");
      const value: Record<string, number> =
        platform === "instagram"
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
        out.permalink =
          platform === "instagram"
            ? `https://www.instagram.com/p/${id}/`
            : `https://www.threads.net/@me/post/${id}`;
      if (fields.includes("timestamp"))
        out.timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, "+0000");
      if (fields.includes("like_count")) out.like_count = m.likes;
      if (fields.includes("comments_count")) out.comments_count = m.comments;
      return json(200, out);
    }
    return graphError(400, 100, "Unsupported request");
  }

  async function x(req: Request, parts: string[], token: string) {
    if (expired.has(token))
      return json(401, { title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" });
    if (req.method === "POST" && parts[0] === "tweets") {
      const body = (await req.json()) as { text?: string };
      const id = `18${String(++seq).padStart(8, "0")}`;
      published.set(id, { platform: "x", text: body.text ?? "" });
      return json(201, { data: { id, text: body.text, edit_history_tweet_ids: [id] } });
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

  async function linkedin(req: Request, parts: string[], token: string) {
    if (!req.headers.get("linkedin-version"))
      return json(426, {
        status: 426,
        code: "NONEXISTENT_VERSION",
        message: "Requested version  is not active",
      });
    if (expired.has(token))
      return json(401, {
        status: 401,
        serviceErrorCode: 65601,
        code: "REVOKED_ACCESS_TOKEN",
        message: "The token used in the request has been revoked by the user",
      });
    if (req.method === "POST" && parts.join("/") === "rest/posts") {
      const body = (await req.json()) as { commentary?: string };
      const urn = `urn:li:share:7${String(++seq).padStart(9, "0")}`;
      published.set(urn, { platform: "linkedin", text: body.commentary ?? "" });
      return new Response(null, { status: 201, headers: { "x-restli-id": urn } });
    }
    if (req.method === "GET" && parts[0] === "rest" && parts[1] === "socialActions" && parts[2]) {
      const urn = decodeURIComponent(parts[2]);
      if (denied.has(`${token}:r_member_social`))
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

  async function reddit(req: Request, url: URL, parts: string[], token: string) {
    if (!req.headers.get("user-agent")) return json(429, { message: "Too Many Requests", error: 429 });
    if (expired.has(token)) return json(401, { message: "Unauthorized", error: 401 });
    const path = parts.join("/");
    if (req.method === "POST" && path === "api/submit") {
      const form = new URLSearchParams(await req.text());
      const id = (++seq).toString(36).padStart(6, "a");
      published.set(`t3_${id}`, { platform: "reddit", text: form.get("text") ?? "" });
      return json(200, {
        json: {
          errors: [],
          data: {
            url: `https://www.reddit.com/r/${form.get("sr")}/comments/${id}/post/`,
            drafts_count: 0,
            id,
            name: `t3_${id}`,
          },
        },
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

  function tiktok(req: Request, parts: string[], token: string) {
    const logId = `2026${++seq}`;
    if (expired.has(token))
      return json(401, {
        data: {},
        error: {
          code: "access_token_invalid",
          message: "The access token is invalid or not found in the request.",
          log_id: logId,
        },
      });
    if (req.method === "POST" && parts.join("/") === "post/publish/content/init")
      return json(200, {
        data: { publish_id: `p_pub_url~v2.${seq}` },
        error: { code: "ok", message: "", log_id: logId },
      });
    return json(404, {
      data: {},
      error: { code: "invalid_params", message: "no such route", log_id: logId },
    });
  }

  const PREFIX: Record<SocialPlatform, string> = {
    instagram: "/instagram/v21.0",
    threads: "/threads/v1.0",
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
          return graph(platform, req, url, parts, token);
        if (platform === "x") return await x(req, parts, token);
        if (platform === "linkedin") return await linkedin(req, parts, token);
        if (platform === "reddit") return await reddit(req, url, parts, token);
        return tiktok(req, parts, token);
      } finally {
        inFlight.set(platform, inFlight.get(platform)! - 1);
      }
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  const bases = Object.fromEntries(
    (Object.keys(PREFIX) as SocialPlatform[]).map((p) => [p, `${base}${PREFIX[p]}`]),
  ) as Record<SocialPlatform, string>;
  return {
    bases,
    /** SOCIAL_API_BASE_<PLATFORM> settings pointing at this fake. */
    env: Object.fromEntries(
      Object.entries(bases).map(([p, u]) => [`SOCIAL_API_BASE_${p.toUpperCase()}`, u]),
    ) as Record<string, string>,
    requests,
    maxInFlight,
    /** The text a post was published with (by the platform's post id). */
    publishedText: (postId: string) => published.get(postId)?.text,
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
