import type { SocialPlatform } from "@site/domain/social";
import { facebookGraph, fakeGraph } from "./fake/graph.ts";
import { fakeLinkedin } from "./fake/linkedin.ts";
import { hostMedia, MEDIA_PATH, serveMedia } from "./fake/media.ts";
import { clientOf, fakeOAuth } from "./fake/oauth.ts";
import { fakeReddit } from "./fake/reddit.ts";
import {
  bearerOf,
  createFakeState,
  DEFAULT_METRICS,
  type FakeMetrics,
  holdRefresh,
  injectedFailure,
  issue,
  json,
  metaUserId,
  metricsOf,
  nextSeq,
  now,
  PREFIX,
} from "./fake/state.ts";
import { ALL_TIKTOK_PRIVACY, fakeTiktok } from "./fake/tiktok.ts";
import { fakeX } from "./fake/x.ts";

export type { FakeMetrics, FakePublication, FakeRequest } from "./fake/state.ts";

/**
 * Fake platform servers on 127.0.0.1 (one Bun server, one path prefix per platform) answering like the
 * real APIs and refusing what they refuse, each rule next to the reference page that states it (in
 * ./fake/, one file per platform): Graph API containers for Instagram and Threads (media required,
 * fetched from its URL, published only once FINISHED), X media upload and posts, LinkedIn's versioned
 * REST API and Images API, Reddit's submit and media lease, TikTok's Content Posting API; with permission
 * errors, expired tokens and 429s on demand. Media URLs are fetched by `fetchMedia` (default `fetch`; a
 * test app can answer them itself).
 */
export function startFakePlatforms(opts: { latencyMs?: number } = {}) {
  const s = createFakeState();
  const graph = fakeGraph(s);
  const x = fakeX(s);
  const linkedin = fakeLinkedin(s);
  const reddit = fakeReddit(s);
  const tiktok = fakeTiktok(s);
  const auth = fakeOAuth(s);
  const platforms = Object.keys(PREFIX) as SocialPlatform[];
  /** Answers held after the platform acted (holdAnswers): the caller sees nothing until released. */
  const holds: {
    platform: SocialPlatform;
    method: string;
    path: string;
    arrived: number;
    gate: Promise<void>;
  }[] = [];

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname.startsWith(MEDIA_PATH)) return serveMedia(s, url);
      if (url.pathname.startsWith("/graph-facebook/")) return facebookGraph(s, req);
      const authFor = /^\/auth\/(\w+)(\/.*)$/.exec(url.pathname);
      if (authFor && authFor[1]! in PREFIX)
        return auth({ platform: authFor[1] as SocialPlatform, req, url, path: authFor[2]! });
      const platform = platforms.find((p) => url.pathname.startsWith(`${PREFIX[p]}/`));
      if (!platform) return json(404, { error: "unknown platform" });
      const token = bearerOf(req);
      s.requests.push({
        platform,
        method: req.method,
        path: url.pathname.slice(PREFIX[platform].length) + url.search,
        at: Date.now(),
        token,
      });
      const failure = injectedFailure(s, platform);
      if (failure) return failure;
      s.inFlight.set(platform, (s.inFlight.get(platform) ?? 0) + 1);
      s.maxInFlight.set(platform, Math.max(s.maxInFlight.get(platform) ?? 0, s.inFlight.get(platform)!));
      try {
        if (opts.latencyMs) await Bun.sleep(opts.latencyMs);
        const parts = url.pathname
          .slice(PREFIX[platform].length + 1)
          .replace(/\/$/, "")
          .split("/");
        const call = { req, url, parts, token };
        const answer =
          platform === "instagram" || platform === "threads"
            ? await graph(platform, call)
            : platform === "x"
              ? await x(call)
              : platform === "linkedin"
                ? await linkedin(call)
                : platform === "reddit"
                  ? await reddit(call)
                  : await tiktok(call);
        const hold = holds.find(
          (h) =>
            h.platform === platform &&
            h.method === req.method &&
            (h.path === parts.join("/") ||
              (h.path.startsWith("*") && parts.join("/").endsWith(h.path.slice(1)))),
        );
        if (hold) {
          hold.arrived++;
          await hold.gate;
        }
        return answer;
      } finally {
        s.inFlight.set(platform, s.inFlight.get(platform)! - 1);
      }
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  s.tiktokVerified.push(`${base}${MEDIA_PATH}`);
  const bases = Object.fromEntries(platforms.map((p) => [p, `${base}${PREFIX[p]}`])) as Record<
    SocialPlatform,
    string
  >;
  return {
    bases,
    /** The address prefix of the files `host` serves (verified with TikTok in the fake). */
    mediaPrefix: `${base}${MEDIA_PATH}`,
    /** The versioned Graph bases (default versions), for tests that call the fake directly. */
    graphBases: { instagram: `${bases.instagram}/v25.0`, threads: `${bases.threads}/v1.0` },
    /** SOCIAL_API_BASE_<PLATFORM> settings pointing at this fake. */
    env: Object.fromEntries(
      Object.entries(bases).map(([p, u]) => [`SOCIAL_API_BASE_${p.toUpperCase()}`, u]),
    ) as Record<string, string>,
    /** SOCIAL_<PLATFORM>_CLIENT_ID/SECRET and SOCIAL_AUTH_BASE_<PLATFORM> pointing at this fake. */
    oauthEnv: Object.fromEntries(
      platforms
        .flatMap((p) => [
          [`SOCIAL_${p.toUpperCase()}_CLIENT_ID`, clientOf(p).id],
          [`SOCIAL_${p.toUpperCase()}_CLIENT_SECRET`, clientOf(p).secret],
          [`SOCIAL_AUTH_BASE_${p.toUpperCase()}`, `${base}/auth/${p}`],
        ])
        .concat([["SOCIAL_REDDIT_DEVELOPER", "fake_dev"]]),
    ) as Record<string, string>,
    /** Tokens as the platform would issue them after a consent (expiring by the fake's clock). */
    issueTokens: (platform: SocialPlatform, scopes: string[] | null = null) => {
      const meta = platform === "instagram" || platform === "threads";
      const user = meta ? metaUserId(s) : `user-${nextSeq(s)}`;
      const t = issue(s, platform, user, { scopes });
      return { ...t, user, expiresAt: new Date(now(s) + t.expiresIn * 1000) };
    },
    /** Sets the fake platforms' clock (tokens expire by it). */
    setNow: (at: Date) => {
      s.offsetMs = at.getTime() - Date.now();
    },
    /** Refresh-token grants the token endpoints answered, by platform. */
    refreshCount: (platform: SocialPlatform) => s.refreshGrants.get(platform) ?? 0,
    /**
     * Holds the answer to every refresh request (any platform) from now until `release()`, so a test
     * can make two renewals meet for certain; `arrived` counts the requests that reached the hold.
     */
    holdRefresh: () => holdRefresh(s),
    /**
     * Holds the answers to `method path` (below the platform's prefix, e.g. POST "tweets"; a path that
     * starts with "*" matches any path ending with the rest, e.g. "*media_publish" under any version
     * and user) after the platform acted on them, until `release()`: a test can kill the caller between
     * the platform's answer and the caller's commit. `arrived()` counts the requests held.
     */
    holdAnswers: (platform: SocialPlatform, method: string, path: string) => {
      let release = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const hold = { platform, method, path, arrived: 0, gate };
      holds.push(hold);
      return {
        arrived: () => hold.arrived,
        release: () => {
          holds.splice(holds.indexOf(hold), 1);
          release();
        },
      };
    },
    /** The posts a platform holds now with this exact text (by the fake's publications). */
    postsWithText: (platform: SocialPlatform, text: string) =>
      [...s.published.entries()]
        .filter(([, p]) => p.platform === platform && p.text === text)
        .map(([id]) => id),
    requests: s.requests,
    maxInFlight: s.maxInFlight,
    /** The text a post was published with (by the platform's post id). */
    publishedText: (postId: string) => s.published.get(postId)?.text,
    /** What a post was published with: text and the files the platform fetched or was sent. */
    publication: (postId: string) => s.published.get(postId),
    /** Serves `bytes` at a URL of this fake (a file a platform can fetch). */
    host: (bytes: Uint8Array, contentType: string) => hostMedia(s, base, { bytes, contentType }),
    /** How media URLs are fetched (default `fetch`): a test app can answer its own delivery route. */
    setMediaFetcher: (f: (url: string) => Promise<Response>) => {
      s.fetcher = f;
    },
    /** Status checks that answer "not ready yet" before containers, uploads and publishes are ready. */
    setProcessingChecks: (n: number) => {
      s.processingChecks = n;
    },
    /** The privacy levels TikTok's creator_info/query lists for this token. */
    setTikTokPrivacy: (token: string, levels: string[]) => s.tiktokPrivacy.set(token, levels),
    /** Verifies a URL prefix with TikTok (as a developer does for the service's PUBLIC_BASE_URL). */
    verifyTikTokUrlPrefix: (prefix: string) => s.tiktokVerified.push(prefix),
    /** The host standing in for graph.facebook.com (Facebook Login), where Instagram Login tokens fail. */
    facebookGraphBase: `${base}/graph-facebook`,
    /** Grants the app a restricted LinkedIn scope (as LinkedIn does after the product's review). */
    grantLinkedinScope: (scope: string) => s.app.linkedinScopes.add(scope),
    /** The app is a LinkedIn Marketing Developer Platform partner: refresh tokens are issued. */
    setLinkedinPartner: (partner: boolean) => {
      s.app.linkedinPartner = partner;
    },
    /** TikTok audited the app: public privacy levels are accepted. */
    setTikTokAudited: (audited: boolean) => {
      s.app.tiktokAudited = audited;
    },
    /** The user unticks `scope` in `platform`'s consent dialog (authorizations go through without it). */
    declineScope: (platform: SocialPlatform, scope: string) => s.declinedScopes.add(`${platform}:${scope}`),
    /** The scopes a token was issued with (null: not issued after a consent). */
    scopesOf: (token: string) => s.issued.get(token)?.scopes ?? null,
    /** Every privacy level TikTok knows. */
    tiktokPrivacyLevels: ALL_TIKTOK_PRIVACY,
    /** Sets what a post reports (by the platform's post id). */
    setMetrics: (postId: string, m: Partial<FakeMetrics>) =>
      s.metrics.set(postId, { ...DEFAULT_METRICS, ...metricsOf(s, postId), ...m }),
    /** The token lacks `permission` (insights, r_member_social) at the platform. */
    deny: (token: string, permission: string) => s.denied.add(`${token}:${permission}`),
    /** The token is invalid or expired at every platform. */
    expire: (token: string) => s.expired.add(token),
    /** The token belongs to an X app on the free tier. */
    freeTier: (token: string) => s.xFreeTier.add(token),
    /** The next `count` requests to `platform` answer `status` (429 with retry-after `retryAfterS`). */
    failNext: (platform: SocialPlatform, count: number, status = 429, retryAfterS = 1) =>
      s.rules.set(platform, { count, status, retryAfterS }),
    /** X's next `count` requests answer 429 for the spent 24-hour cap, reset in `dailyResetS` (window: 1 s). */
    xDailyLimitNext: (count: number, dailyResetS: number) =>
      s.rules.set("x", { count, status: 429, retryAfterS: 1, dailyResetS }),
    /** Reddit's next `count` submits answer 200 with json.errors RATELIMIT in `message`. */
    redditRatelimitNext: (count: number, message: string) => {
      s.redditRatelimit = { count, message };
    },
    /** X processes each finalized video this long (fake clock), saying so in check_after_secs. */
    setXProcessingSeconds: (seconds: number) => {
      s.xProcessingMs = seconds * 1000;
    },
    close: () => server.stop(true),
  };
}

/** The fake's handle. */
export type FakePlatforms = ReturnType<typeof startFakePlatforms>;
