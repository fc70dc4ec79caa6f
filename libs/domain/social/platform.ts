import type { SocialPlatform } from "@site/config";

// The platform identifiers have one home, beside the settings that are read per platform (decision 1522).
export { SOCIAL_PLATFORMS, type SocialPlatform } from "@site/config";

/** Snapshot stages and their delay after publication: 1 h, 24 h, 72 h, 7 d. */
export const STAGE_DELAYS_MS = [3_600_000, 86_400_000, 259_200_000, 604_800_000] as const;
/** `next_stage` of a target whose collection is over. */
export const STAGE_FINISHED = 5;

/** Why a metric is null: the platform does not expose it, or the token cannot read it. */
export type UnavailableReason =
  | "not_exposed"
  | "permission_missing"
  | "paid_tier_required"
  | "token_invalid"
  | "platform_error";

/** The metric fields of a snapshot. */
export const METRIC_FIELDS = ["views", "likes", "comments", "shares", "saves"] as const;
/** One metric field of a snapshot. */
export type MetricField = (typeof METRIC_FIELDS)[number];

/**
 * What an adapter read: null metrics carry their reason in `extra.unavailable`. `found` is the post's
 * real id and address when the target held a pending one (a Reddit media post whose id was not yet
 * listed when it was published, decision 1015): the collector stores them on the target.
 */
export type MetricsReading = Record<MetricField, number | null> & {
  extra: Record<string, unknown>;
  found?: { platformPostId: string; url: string };
};

/** A connected account as an adapter sees it: the token decrypted for this call only. */
export type AdapterAccount = {
  platform: SocialPlatform;
  accountId: string;
  displayName: string | null;
  accessToken: string;
  permissions: string[];
  tier: string | null;
};

/** A published target as an adapter needs it to read metrics. */
export type AdapterTarget = { platformPostId: string; url: string | null; publishedAt: Date };

/**
 * What publishing on a platform returned. `url` is null where the post has no public address (a TikTok
 * post of an unaudited app is private, SELF_ONLY), and `note` then says why.
 */
export type PublishResult = { platformPostId: string; url: string | null; publishedAt: Date; note?: string };

/**
 * One file of a post as an adapter needs it: its kind and type, a URL the platform can fetch without a
 * session (a share-token `t` URL on PUBLIC_BASE_URL, bounded expiry), and its bytes for the platforms
 * that take an upload instead of a URL (X, LinkedIn, Reddit).
 */
export type PublishMedia = {
  kind: "image" | "video";
  contentType: string;
  size: number;
  url: string;
  read(): Promise<Uint8Array<ArrayBuffer>>;
  /**
   * A video's poster (JPEG): a clip's first frame, else a plain frame; for the platforms that need one
   * with the video (Reddit's `video_poster_url`).
   */
  poster?: { contentType: "image/jpeg"; read(): Promise<Uint8Array<ArrayBuffer>> };
};

/** What to publish on one target: its text (the platform's override or the content) and its media. */
export type PublishInput = {
  text: string;
  media: PublishMedia[];
  /**
   * TikTok: the privacy level the user chose from creator_info, with their consent (decision 1013);
   * absent on an unaudited app, which posts SELF_ONLY (decision 1031).
   */
  tiktok?: { privacyLevel: string };
  /**
   * Called by an adapter once the platform named the post it is making, before the post may be out
   * (TikTok's `publish:<publish_id>`): kept on the target while the try runs, so that a cut-off try
   * can be looked up by it (`findPublished`'s `ref`, decision 1497).
   */
  onPublishRef?: (ref: string) => Promise<void>;
};

/** A platform's HTTP API behind one interface: publish a text with media, read a post's metrics. */
export type PlatformAdapter = {
  platform: SocialPlatform;
  publish(account: AdapterAccount, post: PublishInput): Promise<PublishResult>;
  readMetrics(account: AdapterAccount, target: AdapterTarget): Promise<MetricsReading>;
  /**
   * Looks on the platform for a post of `text` by the account made since `since` (its recent posts):
   * the publication of a try that was cut off after it may have reached the platform (decision 1471).
   * `ref`: what the cut-off try passed to `onPublishRef`, if anything. Null when there is none. Absent
   * where the platform offers no such lookup; a PlatformError not `transient` or `rate_limited` when it
   * cannot look this one up (the try then fails safely, decision 1497).
   */
  findPublished?(
    account: AdapterAccount,
    post: { text: string; since: Date; ref: string | null },
  ): Promise<PublishResult | null>;
  /** TikTok: what the creator may post now (creator_info/query), for the user's choice (decision 1013). */
  creatorInfo?(account: AdapterAccount): Promise<CreatorInfo>;
  /**
   * Renews the account's token (present when the platform's OAuth client is configured). A refusal is a
   * PlatformError of kind `auth`.
   */
  renew?(
    current: { accessToken: string; refreshToken: string | null; accountId?: string },
    now: Date,
  ): Promise<TokenSet>;
};

/** A TikTok creator's posting options, as creator_info/query gives them. */
export type CreatorInfo = {
  creatorUsername: string | null;
  creatorNickname: string | null;
  privacyLevelOptions: string[];
  commentDisabled: boolean;
  duetDisabled: boolean;
  stitchDisabled: boolean;
  maxVideoPostDurationSec: number | null;
};

/** Tokens a platform issued: from an authorization code or a refresh. */
export type TokenSet = {
  accessToken: string;
  /** The refresh token to keep (the new one where the platform rotates them); null: none. */
  refreshToken: string | null;
  expiresAt: Date | null;
  /** The platform's id of the user, when the token answer says it. */
  accountId: string | null;
  /** The scopes granted, when the token answer says them. */
  scopes: string[] | null;
};

/** The adapters by platform. */
export type PlatformAdapters = Partial<Record<SocialPlatform, PlatformAdapter>>;

/**
 * A failed platform call. `rate_limited` is a refusal for now, never a permanent one: it carries the wait
 * the platform stated (`retryAfterMs`, from when it answered) and, where the platform named the moment
 * itself (X's `x-rate-limit-reset`, an HTTP-date `Retry-After`), `retryAt`; the message is the platform's
 * words. `auth` means the token is invalid or expired; `permission` that it lacks a permission;
 * `transient` a 5xx or network failure (with the wait of its `Retry-After`, if any).
 */
export class PlatformError extends Error {
  readonly kind: "rate_limited" | "auth" | "permission" | "rejected" | "transient";
  readonly status: number;
  readonly retryAfterMs: number | null;
  /** The moment the platform said to try again, when it named one (absolute); else null. */
  readonly retryAt: Date | null;
  constructor(
    kind: PlatformError["kind"],
    message: string,
    opts: { status?: number; retryAfterMs?: number | null; retryAt?: Date | null } = {},
  ) {
    super(message);
    this.name = "PlatformError";
    this.kind = kind;
    this.status = opts.status ?? 0;
    this.retryAfterMs = opts.retryAfterMs ?? null;
    this.retryAt = opts.retryAt ?? null;
  }
}

/** A reading with every metric null for `reason` (a platform with no readable metrics, a free tier…). */
export function unavailableReading(
  reason: UnavailableReason,
  extra: Record<string, unknown> = {},
): MetricsReading {
  const unavailable = Object.fromEntries(METRIC_FIELDS.map((f) => [f, reason]));
  return {
    views: null,
    likes: null,
    comments: null,
    shares: null,
    saves: null,
    extra: { ...extra, unavailable },
  };
}

/**
 * Builds a reading from the metrics read; a field left out is null with `reasons[field]` (default
 * `not_exposed`) recorded in `extra.unavailable`, so "0" and "cannot know" stay apart.
 */
export function buildReading(
  read: Partial<Record<MetricField, number | null | undefined>>,
  reasons: Partial<Record<MetricField, UnavailableReason>>,
  extra: Record<string, unknown> = {},
): MetricsReading {
  const out = { extra: { ...extra } } as MetricsReading;
  const unavailable: Record<string, UnavailableReason> = {};
  for (const f of METRIC_FIELDS) {
    const v = read[f];
    if (typeof v === "number" && Number.isFinite(v)) out[f] = Math.trunc(v);
    else {
      out[f] = null;
      unavailable[f] = reasons[f] ?? "not_exposed";
    }
  }
  if (Object.keys(unavailable).length > 0) out.extra.unavailable = unavailable;
  return out;
}

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The OAuth side of the platforms, as the connect flow needs it (implemented in libs/social). */
export type OAuthPort = {
  /** True when SOCIAL_<PLATFORM>_CLIENT_ID is set. */
  configured(platform: SocialPlatform): boolean;
  /** True when the platform takes PKCE (X, TikTok). */
  usesPkce(platform: SocialPlatform): boolean;
  authorizeUrl(
    platform: SocialPlatform,
    input: { state: string; redirectUri: string; codeChallenge: string | null },
  ): string;
  exchange(
    platform: SocialPlatform,
    input: { code: string; redirectUri: string; codeVerifier: string | null; now: Date },
  ): Promise<TokenSet>;
  /** The user the token belongs to, for platforms whose token answer does not say it. */
  identify(
    platform: SocialPlatform,
    accessToken: string,
  ): Promise<{ accountId: string; displayName: string | null } | null>;
  /** The scopes the authorization asks for. */
  scopes(platform: SocialPlatform): string[];
};
