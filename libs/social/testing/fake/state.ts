/**
 * The state every fake platform shares (issued tokens and their scopes, metrics, the requests log,
 * publications, failure rules, the clock offset, refresh holds) and the small helpers each platform's
 * handler uses on it.
 */
import { readMp4, sniffImage } from "@site/domain/media";
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

/** What a post reports until a test sets its metrics. */
export const DEFAULT_METRICS: FakeMetrics = {
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
  /** X: the token's user (or, for a token the fake did not issue, the token) and when (fake clock). */
  owner?: string;
  at?: number;
};

/** The type and size of a file a platform fetched or was sent. */
export type Fetched = { contentType: string; size: number };

/**
 * A failure rule set by `failNext`: the next `count` requests answer `status`. `dailyResetS`: on X, the
 * 429 is the 24-hour cap's, whose reset is that many seconds away (beyond the 15-minute window's).
 */
type FailureRule = { count: number; status: number; retryAfterS?: number; dailyResetS?: number };

/** An access token the fake issued; it expires by the fake's clock. */
type Issued = {
  platform: SocialPlatform;
  user: string;
  expiresAt: number;
  issuedAt: number;
  /** The scopes the user granted at authorize (null: a token the fake issued without a consent). */
  scopes: string[] | null;
};

/** The path prefix of each platform's API on the fake server. */
export const PREFIX: Record<SocialPlatform, string> = {
  instagram: "/instagram",
  threads: "/threads",
  x: "/x/2",
  linkedin: "/linkedin",
  reddit: "/reddit",
  tiktok: "/tiktok/v2",
};

/** Access token lifetimes: X 2 h, Reddit 1 h, TikTok 24 h, LinkedIn 60 days, Meta long-lived 60 days. */
export const LIFETIME_S: Record<SocialPlatform, number> = {
  x: 7200,
  reddit: 3600,
  tiktok: 86_400,
  linkedin: 5_184_000,
  instagram: 5_184_000,
  threads: 5_184_000,
};

/** One request routed to a platform: its URL, its path below the prefix split at "/", its bearer token. */
export type PlatformCall = { req: Request; url: URL; parts: string[]; token: string };

/** The shared state of one fake server. */
export type FakeState = ReturnType<typeof createFakeState>;

/** Fresh state for one fake server: nothing issued, published or hosted; the clock on time. */
export function createFakeState() {
  return {
    /** The counter every id the fake makes is numbered from. */
    seq: 0,
    metrics: new Map<string, FakeMetrics>(),
    /** `${token}:${permission}` the platform refuses. */
    denied: new Set<string>(),
    expired: new Set<string>(),
    xFreeTier: new Set<string>(),
    rules: new Map<SocialPlatform, FailureRule>(),
    requests: [] as FakeRequest[],
    inFlight: new Map<SocialPlatform, number>(),
    maxInFlight: new Map<SocialPlatform, number>(),
    published: new Map<string, FakePublication>(),
    hosted: new Map<string, { bytes: Uint8Array; contentType: string }>(),
    tiktokPrivacy: new Map<string, string[]>(),
    /** The provider-side facts about our app that the strict rules follow (see each rule's page). */
    /**
     * `${platform}:${scope}` a user unticks in the consent dialog: the authorization goes through
     * without it, and the token answer lists what was granted (Meta's `permissions`, others' `scope`).
     */
    declinedScopes: new Set<string>(),
    app: {
      /** LinkedIn scopes of the app's products: the self-serve ones; r_member_social only when granted. */
      linkedinScopes: new Set(["openid", "profile", "email", "w_member_social"]),
      /** LinkedIn issues refresh tokens to Marketing Developer Platform partners only. */
      linkedinPartner: false,
      /** TikTok audited the app (public posts); unaudited apps may post SELF_ONLY only. */
      tiktokAudited: false,
    },
    /** URL prefixes verified with TikTok for PULL_FROM_URL (the fake's own media address always is). */
    tiktokVerified: [] as string[],
    /** The fake platforms' clock, as an offset from the real one (tokens expire by it). */
    offsetMs: 0,
    /** How many status checks answer "not ready yet" before a container/upload/publish is ready. */
    processingChecks: 0,
    /** X: how long a finalized video is processed (ms of the fake's clock), stated as check_after_secs. */
    xProcessingMs: 0,
    /**
     * Reddit: the next `count` submits are refused with RATELIMIT inside a 200, in `message` (Reddit's
     * words, e.g. "you are doing that too much. try again in 9 minutes.").
     */
    redditRatelimit: null as { count: number; message: string } | null,
    /** Fetches a media URL the way the platform would (cURL from its servers). */
    fetcher: (url: string): Promise<Response> => fetch(url),
    issued: new Map<string, Issued>(),
    refreshTokens: new Map<
      string,
      { platform: SocialPlatform; user: string; used: boolean; scopes: string[] | null }
    >(),
    refreshGrants: new Map<SocialPlatform, number>(),
    /** While a test holds refreshes (holdRefresh), each refresh request waits here, counted, for release. */
    refreshHold: null as { arrived: number; gate: Promise<void> } | null,
  };
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}

/** The fake platforms' clock (ms). */
export function now(s: FakeState): number {
  return Date.now() + s.offsetMs;
}

/** The next number for an id the fake makes. */
export function nextSeq(s: FakeState): number {
  return ++s.seq;
}

/** The bearer token of a request ("" when it has none). */
export function bearerOf(req: Request): string {
  return (req.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
}

/** The type of a file by its bytes: an image by its magic bytes, MP4 by its `ftyp` box, else null. */
export function typeOfBytes(b: Uint8Array): string | null {
  const image = sniffImage(b);
  if (image) return image.contentType;
  if (b.length >= 12 && String.fromCharCode(...b.subarray(4, 8)) === "ftyp") return "video/mp4";
  return null;
}

/** Issues an access token (and a refresh token, except on Meta) expiring by the fake's clock. */
export function issue(
  s: FakeState,
  platform: SocialPlatform,
  user: string,
  opts: { lifetimeS?: number; withRefresh?: boolean; scopes?: string[] | null } = {},
) {
  const { lifetimeS = LIFETIME_S[platform], withRefresh = true, scopes = null } = opts;
  const accessToken = `at-${platform}-${nextSeq(s)}-${Math.random().toString(36).slice(2, 8)}`;
  s.issued.set(accessToken, {
    platform,
    user,
    expiresAt: now(s) + lifetimeS * 1000,
    issuedAt: now(s),
    scopes,
  });
  let refreshToken: string | null = null;
  if (withRefresh && platform !== "instagram" && platform !== "threads") {
    refreshToken = `rt-${platform}-${nextSeq(s)}-${Math.random().toString(36).slice(2, 8)}`;
    s.refreshTokens.set(refreshToken, { platform, user, used: false, scopes });
  }
  return { accessToken, refreshToken, expiresIn: lifetimeS };
}

/**
 * Whether the token carries `scope`: a token issued after a consent has exactly the scopes granted
 * there; any other token (made up by a test) has every scope unless `deny` took it away.
 */
export function hasScope(s: FakeState, token: string, scope: string): boolean {
  const t = s.issued.get(token);
  if (t?.scopes) return t.scopes.includes(scope);
  return !s.denied.has(`${token}:${scope}`);
}

/**
 * Meta's user ids are int64 beyond 2^53 (17841400000000000123 is the form of an Instagram professional
 * account id); the token answer carries them as a JSON number
 * (https://github.com/fbsamples/threads_api/issues/9), so JSON.parse yields a neighbouring id.
 */
export function metaUserId(s: FakeState): string {
  return `178414${String(nextSeq(s)).padStart(14, "0")}`;
}

/** Counts a refresh grant the token endpoints answered. */
export function countRefresh(s: FakeState, p: SocialPlatform): void {
  s.refreshGrants.set(p, (s.refreshGrants.get(p) ?? 0) + 1);
}

/** Waits, counted, while a test holds refreshes (see `holdRefresh`). */
export async function heldRefresh(s: FakeState): Promise<void> {
  const hold = s.refreshHold;
  if (!hold) return;
  hold.arrived++;
  await hold.gate;
}

/**
 * Holds the answer to every refresh request (any platform) from now until `release()`, so a test
 * can make two renewals meet for certain; `arrived` counts the requests that reached the hold.
 */
export function holdRefresh(s: FakeState) {
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const hold = { arrived: 0, gate };
  s.refreshHold = hold;
  return {
    get arrived() {
      return hold.arrived;
    },
    release: () => {
      if (s.refreshHold === hold) s.refreshHold = null;
      open();
    },
  };
}

/** Whether the token was expired by a test or by the fake's clock. */
export function isExpired(s: FakeState, token: string): boolean {
  if (s.expired.has(token)) return true;
  const t = s.issued.get(token);
  return t !== undefined && t.expiresAt <= now(s);
}

/** What a post reports (the defaults unless a test set its metrics). */
export function metricsOf(s: FakeState, id: string): FakeMetrics {
  return s.metrics.get(id) ?? DEFAULT_METRICS;
}

/** A Graph API error (Instagram, Threads, graph.facebook.com). */
export function graphError(
  status: number,
  code: number,
  message: string,
  more: { type?: string; subcode?: number } = {},
): Response {
  const { type = "OAuthException", subcode } = more;
  return json(status, {
    error: { message, type, code, ...(subcode ? { error_subcode: subcode } : {}), fbtrace_id: "AbCdEf123" },
  });
}

/** Fetches a media URL; the type by its bytes, or why it could not be fetched. */
export async function fetchMedia(
  s: FakeState,
  url: string | null | undefined,
  inspect?: (bytes: Uint8Array) => string | null,
): Promise<Fetched | string> {
  if (!url) return "no URL";
  let res: Response;
  try {
    res = await s.fetcher(url);
  } catch (err) {
    return `could not fetch ${url}: ${String(err)}`;
  }
  if (!res.ok) return `fetching the media answered HTTP ${res.status}`;
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = typeOfBytes(bytes);
  if (!type) return "the media is not an image or an MP4 video";
  return inspect?.(bytes) ?? { contentType: type, size: bytes.byteLength };
}

/**
 * Why a platform that needs videos of at least `minS` seconds (Instagram Reels, TikTok, LinkedIn: 3 s)
 * refuses these bytes once it processed them, or null (also for bytes it cannot read as an MP4).
 */
export function tooShort(bytes: Uint8Array, minS: number): string | null {
  const facts = readMp4(bytes);
  return facts && facts.durationS < minS
    ? `the video lasts ${Math.round(facts.durationS * 100) / 100} s, under the ${minS} s minimum`
    : null;
}

/** The answer of a failure rule `failNext` set for the platform (spending it), or null when none is due. */
export function injectedFailure(s: FakeState, platform: SocialPlatform): Response | null {
  const rule = s.rules.get(platform);
  if (!rule || rule.count <= 0) return null;
  rule.count--;
  if (rule.status !== 429)
    return json(rule.status, { error: { message: "Service temporarily unavailable", code: 2 } });
  const wait = rule.retryAfterS ?? 1;
  const headers: Record<string, string> = { "retry-after": String(wait) };
  if (platform === "x") {
    // https://docs.x.com/x-api/fundamentals/rate-limits : a 429 carries x-rate-limit-limit/-remaining/
    // -reset (epoch seconds of the 15-minute window's end); the 24-hour cap of POST /2/tweets adds
    // x-user-limit-24hour-limit/-remaining/-reset, and once it is spent the window's reset is not enough.
    const at = (s: number) => String(Math.ceil(Date.now() / 1000 + s));
    Object.assign(headers, {
      "x-rate-limit-limit": "100",
      "x-rate-limit-remaining": "0",
      "x-rate-limit-reset": at(wait),
    });
    if (rule.dailyResetS !== undefined)
      Object.assign(headers, {
        "x-user-limit-24hour-limit": "17",
        "x-user-limit-24hour-remaining": "0",
        "x-user-limit-24hour-reset": at(rule.dailyResetS),
      });
    delete headers["retry-after"];
  }
  if (platform === "reddit") headers["x-ratelimit-reset"] = String(wait);
  if (platform === "tiktok") {
    // https://developers.tiktok.com/doc/tiktok-api-v2-rate-limit : over the limit of a 1-minute sliding
    // window, 429 with error code `rate_limit_exceeded` (no Retry-After is documented).
    delete headers["retry-after"];
    return json(
      429,
      {
        data: {},
        error: {
          code: "rate_limit_exceeded",
          message: "The API rate limit was exceeded. Please try again later.",
          log_id: `2026${nextSeq(s)}`,
        },
      },
      headers,
    );
  }
  return json(
    429,
    platform === "instagram" || platform === "threads"
      ? { error: { message: "(#4) Application request limit reached", type: "OAuthException", code: 4 } }
      : { title: "Too Many Requests", status: 429, message: "Too Many Requests" },
    headers,
  );
}
