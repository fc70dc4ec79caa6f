import { createHash, randomBytes } from "node:crypto";
import { PlatformError, type SocialPlatform, type TokenSet } from "@site/domain/social";
import { type ApiAnswer, callPlatform, exactId } from "./_http.ts";

/**
 * Each platform's OAuth 2.0 authorization-code flow: where the user authorizes, where codes and refresh
 * tokens are exchanged, what to ask for so that a refresh token comes back, and how a token is renewed.
 */
type OAuthSpec = {
  authorize: string;
  token: string;
  scopes: string[];
  /** Sent as `client_key` (TikTok) or `client_id`. */
  clientParam: "client_id" | "client_key";
  /** Client credentials in a Basic header (X, Reddit) or in the form body. */
  clientAuth: "basic" | "body";
  pkce: boolean;
  extra?: Record<string, string>;
  /**
   * How a token is renewed: a refresh-token grant, or (Instagram, Threads) the long-lived access token
   * refreshing itself at `refreshUrl` with `grant_type`.
   */
  renew: { kind: "refresh_token" } | { kind: "self"; url: string; grantType: string };
  /** The long-lived exchange of Instagram and Threads after the code exchange. */
  exchange?: { url: string; grantType: string };
};

export const OAUTH: Record<SocialPlatform, OAuthSpec> = {
  // https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token : PKCE is
  // required; `offline.access` yields a refresh token; tokens live 2 hours; refresh tokens rotate.
  x: {
    authorize: "https://x.com/i/oauth2/authorize",
    token: "https://api.x.com/2/oauth2/token",
    scopes: ["tweet.read", "tweet.write", "users.read", "media.write", "offline.access"],
    clientParam: "client_id",
    clientAuth: "basic",
    pkce: true,
    renew: { kind: "refresh_token" },
  },
  // https://github.com/reddit-archive/reddit/wiki/OAuth2 : `duration=permanent` yields a refresh
  // token; access tokens live 1 hour; client credentials by Basic auth; no PKCE. `history` opens
  // GET /user/<name>/submitted, where an image post's id is found (https://www.reddit.com/dev/api/oauth#GET_user_{username}_submitted
  // lists the endpoint under the `history` scope; decision 1015).
  reddit: {
    authorize: "https://www.reddit.com/api/v1/authorize",
    token: "https://www.reddit.com/api/v1/access_token",
    scopes: ["identity", "submit", "read", "history"],
    clientParam: "client_id",
    clientAuth: "basic",
    pkce: false,
    extra: { duration: "permanent" },
    renew: { kind: "refresh_token" },
  },
  // https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow and
  // .../programmatic-refresh-tokens : tokens live 60 days; refresh tokens (1 year, not rotated) only for
  // "a limited set of partners". Only the self-serve products' scopes are asked for ("Share on LinkedIn":
  // w_member_social, "Sign In with LinkedIn using OpenID Connect": openid profile); r_member_social is
  // restricted ("granted to select developers only", https://learn.microsoft.com/en-us/linkedin/marketing/community-management/members/post-statistics)
  // and asked for only when SOCIAL_LINKEDIN_RESTRICTED_SCOPES lists it (decision 1012).
  linkedin: {
    authorize: "https://www.linkedin.com/oauth/v2/authorization",
    token: "https://www.linkedin.com/oauth/v2/accessToken",
    scopes: ["openid", "profile", "w_member_social"],
    clientParam: "client_id",
    clientAuth: "body",
    pkce: false,
    renew: { kind: "refresh_token" },
  },
  // https://developers.tiktok.com/doc/oauth-user-access-token-management : `client_key`; access tokens
  // live 24 hours; a refresh may return a new refresh token, which replaces the old one. `video.list`
  // opens /v2/video/query/, the metrics (https://developers.tiktok.com/doc/tiktok-api-v2-video-query);
  // asked for only with SOCIAL_TIKTOK_READ_METRICS (decision 1032).
  tiktok: {
    authorize: "https://www.tiktok.com/v2/auth/authorize/",
    token: "https://open.tiktokapis.com/v2/oauth/token/",
    scopes: ["user.info.basic", "video.publish"],
    clientParam: "client_key",
    clientAuth: "body",
    pkce: true,
    renew: { kind: "refresh_token" },
  },
  // https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login :
  // a short-lived token from the code, exchanged for a 60-day one, which refreshes itself
  // (`ig_refresh_token`) once at least 24 hours old.
  instagram: {
    authorize: "https://www.instagram.com/oauth/authorize",
    token: "https://api.instagram.com/oauth/access_token",
    scopes: [
      "instagram_business_basic",
      "instagram_business_content_publish",
      "instagram_business_manage_insights",
    ],
    clientParam: "client_id",
    clientAuth: "body",
    pkce: false,
    exchange: { url: "https://graph.instagram.com/access_token", grantType: "ig_exchange_token" },
    renew: {
      kind: "self",
      url: "https://graph.instagram.com/refresh_access_token",
      grantType: "ig_refresh_token",
    },
  },
  // https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions and
  // .../long-lived-tokens : the same pattern with `th_exchange_token` / `th_refresh_token`.
  threads: {
    authorize: "https://threads.net/oauth/authorize",
    token: "https://graph.threads.net/oauth/access_token",
    scopes: ["threads_basic", "threads_content_publish", "threads_manage_insights"],
    clientParam: "client_id",
    clientAuth: "body",
    pkce: false,
    exchange: { url: "https://graph.threads.net/access_token", grantType: "th_exchange_token" },
    renew: {
      kind: "self",
      url: "https://graph.threads.net/refresh_access_token",
      grantType: "th_refresh_token",
    },
  },
};

/**
 * An OAuth client of one platform, the base its authorization paths are taken after (tests), and the
 * restricted scopes the provider granted this app (LinkedIn's r_member_social), asked for besides.
 */
export type OAuthClient = { id: string; secret: string; authBase: string | null; extraScopes?: string[] };

/** The scopes an authorization asks for: the ordinary app's, plus the restricted ones it was granted. */
export function scopesOf(platform: SocialPlatform, client: Pick<OAuthClient, "extraScopes">): string[] {
  return [...new Set([...OAUTH[platform].scopes, ...(client.extraScopes ?? [])])];
}

/** A real address, or its path after `SOCIAL_AUTH_BASE_<PLATFORM>` when that is set. */
export function authUrl(real: string, authBase: string | null): string {
  if (!authBase) return real;
  const u = new URL(real);
  return `${authBase.replace(/\/$/, "")}${u.pathname}`;
}

/** A PKCE pair (RFC 7636, S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The address to send the user to, asking for the scopes that yield a refresh token. */
export function authorizeUrl(
  platform: SocialPlatform,
  client: OAuthClient,
  input: { state: string; redirectUri: string; codeChallenge: string | null },
): string {
  const spec = OAUTH[platform];
  const u = new URL(authUrl(spec.authorize, client.authBase));
  u.searchParams.set(spec.clientParam, client.id);
  u.searchParams.set("response_type", "code");
  u.searchParams.set("redirect_uri", input.redirectUri);
  u.searchParams.set("state", input.state);
  u.searchParams.set(
    "scope",
    scopesOf(platform, client).join(
      platform === "tiktok" || platform === "instagram" || platform === "threads" ? "," : " ",
    ),
  );
  for (const [k, v] of Object.entries(spec.extra ?? {})) u.searchParams.set(k, v);
  if (spec.pkce && input.codeChallenge) {
    u.searchParams.set("code_challenge", input.codeChallenge);
    u.searchParams.set("code_challenge_method", "S256");
  }
  return u.toString();
}

type TokenAnswer = {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  /** Instagram's granted permissions: a list, or comma-separated text. */
  permissions?: string[] | string;
  user_id?: string | number;
  open_id?: string;
  error?: string | { code?: string; message?: string };
  error_description?: string;
};

function tokenError(platform: SocialPlatform, a: ApiAnswer, what: string): PlatformError {
  const b = (a.body ?? {}) as TokenAnswer;
  const code = typeof b.error === "string" ? b.error : (b.error?.code ?? `HTTP ${a.status}`);
  const message = `${platform}: the ${what} was refused (${code}${b.error_description ? `: ${b.error_description}` : ""})`;
  if (a.status >= 500 || a.status === 0) return new PlatformError("transient", message, { status: a.status });
  if (a.status === 429) return new PlatformError("rate_limited", message, { status: 429 });
  // invalid_grant and the like: the platform will not renew this token; the account must reconnect.
  return new PlatformError("auth", message, { status: a.status });
}

function tokenSet(b: TokenAnswer, now: Date, keepRefresh: string | null, raw?: string): TokenSet {
  return {
    accessToken: b.access_token!,
    refreshToken: b.refresh_token ?? keepRefresh,
    expiresAt: typeof b.expires_in === "number" ? new Date(now.getTime() + b.expires_in * 1000) : null,
    // A numeric user_id beyond 2^53 is read as its digits, never through the lossy double.
    accountId: b.open_id ?? exactId(raw, "user_id"),
    scopes: grantedScopes(b),
  };
}

/**
 * What the token answer says was granted: OAuth's `scope` (RFC 6749 §5.1), or Instagram's
 * `permissions` (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login#step-2--exchange-the-code-for-a-token);
 * null when it says neither.
 */
function grantedScopes(b: TokenAnswer): string[] | null {
  const raw = typeof b.scope === "string" ? b.scope : b.permissions;
  if (Array.isArray(raw)) return raw.filter((x) => typeof x === "string" && x !== "");
  return typeof raw === "string" ? raw.split(/[ ,]+/).filter(Boolean) : null;
}

async function postToken(
  platform: SocialPlatform,
  client: OAuthClient,
  form: Record<string, string>,
  userAgent?: string,
) {
  const spec = OAUTH[platform];
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const body = new URLSearchParams(form);
  if (spec.clientAuth === "basic")
    headers.authorization = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`;
  else {
    body.set(spec.clientParam, client.id);
    body.set("client_secret", client.secret);
  }
  if (platform === "x") body.set("client_id", client.id);
  if (platform === "reddit" && userAgent) headers["user-agent"] = userAgent;
  return callPlatform(authUrl(spec.token, client.authBase), { method: "POST", headers, body });
}

/** Exchanges an authorization code for tokens (and, on Instagram and Threads, for a long-lived one). */
export async function exchangeCode(
  platform: SocialPlatform,
  client: OAuthClient,
  input: { code: string; redirectUri: string; codeVerifier: string | null; now: Date; userAgent?: string },
): Promise<TokenSet> {
  const spec = OAUTH[platform];
  const a = await postToken(
    platform,
    client,
    {
      grant_type: "authorization_code",
      code: input.code,
      redirect_uri: input.redirectUri,
      ...(spec.pkce && input.codeVerifier ? { code_verifier: input.codeVerifier } : {}),
    },
    input.userAgent,
  );
  const b = (a.body ?? {}) as TokenAnswer & { data?: TokenAnswer[] };
  if (a.status < 200 || a.status >= 300 || !b.access_token)
    throw tokenError(platform, a, "authorization code");
  const short = tokenSet(b, input.now, null, a.raw);
  if (!spec.exchange) return short;
  const u = new URL(authUrl(spec.exchange.url, client.authBase));
  u.searchParams.set("grant_type", spec.exchange.grantType);
  u.searchParams.set("client_secret", client.secret);
  u.searchParams.set("access_token", short.accessToken);
  const long = await callPlatform(u.toString());
  const lb = (long.body ?? {}) as TokenAnswer;
  if (long.status !== 200 || !lb.access_token) throw tokenError(platform, long, "long-lived token exchange");
  // The account id is asked of /me afterwards, not taken from the token answer: Meta sends `user_id` there
  // as a JSON number, and "the id from /me is the correct one" (https://github.com/fbsamples/threads_api/issues/9;
  // https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started#get-started).
  return { ...tokenSet(lb, input.now, null), accountId: null, scopes: short.scopes };
}

/**
 * Renews a token before it expires: a refresh-token grant (the new refresh token replaces the old one
 * where the platform rotates them), or the long-lived token refreshing itself (Instagram, Threads).
 * A refusal is a PlatformError of kind `auth`: the account must be connected again.
 */
export async function renewToken(
  platform: SocialPlatform,
  client: OAuthClient,
  current: { accessToken: string; refreshToken: string | null },
  now: Date,
  userAgent?: string,
): Promise<TokenSet> {
  const spec = OAUTH[platform];
  if (spec.renew.kind === "self") {
    const u = new URL(authUrl(spec.renew.url, client.authBase));
    u.searchParams.set("grant_type", spec.renew.grantType);
    u.searchParams.set("access_token", current.accessToken);
    const a = await callPlatform(u.toString());
    const b = (a.body ?? {}) as TokenAnswer;
    if (a.status !== 200 || !b.access_token) throw tokenError(platform, a, "token refresh");
    return tokenSet(b, now, null);
  }
  if (!current.refreshToken)
    throw new PlatformError("auth", `${platform}: the token expired and there is no refresh token`);
  const a = await postToken(
    platform,
    client,
    { grant_type: "refresh_token", refresh_token: current.refreshToken },
    userAgent,
  );
  const b = (a.body ?? {}) as TokenAnswer;
  if (a.status < 200 || a.status >= 300 || !b.access_token) throw tokenError(platform, a, "token refresh");
  return tokenSet(b, now, current.refreshToken);
}
