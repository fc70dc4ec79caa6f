/**
 * The state every fake platform shares (issued tokens and their scopes, metrics, the requests log,
 * publications, failure rules, the clock offset, refresh holds) and the small helpers each platform's
 * handler uses on it.
 */
import { sniffImage } from "@site/domain/media";
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

/** A failure rule set by `failNext`: the next `count` requests answer `status`. */
type FailureRule = { count: number; status: number; retryAfterS?: number };

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
export async function fetchMedia(s: FakeState, url: string | null | undefined): Promise<Fetched | string> {
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
  return type ? { contentType: type, size: bytes.byteLength } : "the media is not an image or an MP4 video";
}

/** The answer of a failure rule `failNext` set for the platform (spending it), or null when none is due. */
export function injectedFailure(s: FakeState, platform: SocialPlatform): Response | null {
  const rule = s.rules.get(platform);
  if (!rule || rule.count <= 0) return null;
  rule.count--;
  if (rule.status !== 429)
    return json(rule.status, { error: { message: "Service temporarily unavailable", code: 2 } });
  const headers: Record<string, string> = { "retry-after": String(rule.retryAfterS ?? 1) };
  if (platform === "x")
    headers["x-rate-limit-reset"] = String(Math.ceil(Date.now() / 1000 + (rule.retryAfterS ?? 1)));
  if (platform === "reddit") headers["x-ratelimit-reset"] = String(rule.retryAfterS ?? 1);
  return json(
    429,
    platform === "instagram" || platform === "threads"
      ? { error: { message: "(#4) Application request limit reached", type: "OAuthException", code: 4 } }
      : { title: "Too Many Requests", status: 429, message: "Too Many Requests" },
    headers,
  );
}
