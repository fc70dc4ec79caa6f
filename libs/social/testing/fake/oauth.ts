/**
 * The platforms' OAuth endpoints on the fake, under /auth/<platform> + the platform's own paths:
 * authorize (consent granted at once), the token endpoint (codes, PKCE, refresh grants that rotate
 * where the platform rotates them) and Meta's long-lived token exchange and refresh.
 */
import type { SocialPlatform } from "@site/domain/social";
import { REDDIT_UA } from "./reddit.ts";
import {
  countRefresh,
  type FakeState,
  graphError,
  heldRefresh,
  isExpired,
  issue,
  json,
  LIFETIME_S,
  metaUserId,
  nextSeq,
  now,
} from "./state.ts";

type Code = {
  platform: SocialPlatform;
  redirectUri: string;
  challenge: string | null;
  used: boolean;
  user: string;
  refresh: boolean;
  scopes: string[];
};

/** The shared state and the authorization codes issued (by code). */
type OAuthCtx = { s: FakeState; codes: Map<string, Code> };

/** A request to a platform's OAuth endpoints: `path` below /auth/<platform>. */
type AuthCall = { platform: SocialPlatform; req: Request; url: URL; path: string };

/** Refresh tokens used once are refused again where the platform rotates them (X, TikTok). */
const ROTATES: Record<SocialPlatform, boolean> = {
  x: true,
  tiktok: true,
  reddit: false,
  linkedin: false,
  instagram: false,
  threads: false,
};

const AUTH_PATHS: Record<SocialPlatform, { authorize: string; token: string }> = {
  x: { authorize: "/i/oauth2/authorize", token: "/2/oauth2/token" },
  reddit: { authorize: "/api/v1/authorize", token: "/api/v1/access_token" },
  linkedin: { authorize: "/oauth/v2/authorization", token: "/oauth/v2/accessToken" },
  tiktok: { authorize: "/v2/auth/authorize/", token: "/v2/oauth/token/" },
  instagram: { authorize: "/oauth/authorize", token: "/oauth/access_token" },
  threads: { authorize: "/oauth/authorize", token: "/oauth/access_token" },
};

/** The client id and secret the fake knows our app by on a platform. */
export function clientOf(p: SocialPlatform): { id: string; secret: string } {
  return { id: `client-${p}`, secret: `secret-${p}` };
}

/** The OAuth handler of every platform. */
export function fakeOAuth(s: FakeState): (call: AuthCall) => Promise<Response> {
  const ctx: OAuthCtx = { s, codes: new Map() };
  return (call) => auth(ctx, call);
}

function oauthError(status: number, error: string, description: string): Response {
  return json(status, { error, error_description: description });
}

function s256(v: string): string {
  return new Bun.CryptoHasher("sha256").update(v).digest("base64url");
}

function isMeta(platform: SocialPlatform): boolean {
  return platform === "instagram" || platform === "threads";
}

async function auth(ctx: OAuthCtx, c: AuthCall): Promise<Response> {
  const { platform, req, path } = c;
  const paths = AUTH_PATHS[platform];
  if (req.method === "GET" && path === paths.authorize) return authorize(ctx, c);
  if (req.method === "POST" && path === paths.token) return tokenEndpoint(ctx, c);
  if (
    isMeta(platform) &&
    req.method === "GET" &&
    (path === "/access_token" || path === "/refresh_access_token")
  )
    return metaLongLived(ctx, c);
  return json(404, { error: "not_found" });
}

/**
 * The user's consent, granted at once: a redirect to redirect_uri with `code` and `state`.
 * Client id (`client_key` on TikTok), response_type=code, redirect_uri and state are required;
 * X and TikTok require PKCE S256 (https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code,
 * https://developers.tiktok.com/doc/login-kit-web). A refresh token comes back only for X's
 * `offline.access` scope and Reddit's `duration=permanent` (https://github.com/reddit-archive/reddit/wiki/OAuth2).
 */
function authorize(ctx: OAuthCtx, c: AuthCall): Response {
  const { platform } = c;
  const q = c.url.searchParams;
  const id = q.get(platform === "tiktok" ? "client_key" : "client_id");
  const redirectUri = q.get("redirect_uri");
  if (id !== clientOf(platform).id) return oauthError(400, "invalid_client", "unknown client");
  if (q.get("response_type") !== "code" || !redirectUri || !q.get("state"))
    return oauthError(400, "invalid_request", "response_type=code, redirect_uri and state are required");
  const needsPkce = platform === "x" || platform === "tiktok";
  if (needsPkce && (!q.get("code_challenge") || q.get("code_challenge_method") !== "S256"))
    return oauthError(400, "invalid_request", "code_challenge with S256 is required");
  // The user may untick a permission in the consent dialog; the token answer then lists only the ones
  // granted (Instagram's `permissions`,
  // https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login#step-2--exchange-the-code-for-a-token).
  const scopes = (q.get("scope") ?? "")
    .split(/[ ,]+/)
    .filter((sc) => sc && !ctx.s.declinedScopes.has(`${platform}:${sc}`));
  // LinkedIn grants only the scopes of the app's products; asking for another (r_member_social
  // without the restricted product) sends the user back with error=unauthorized_scope_error
  // (https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow#failed-requests).
  const unauthorized =
    platform === "linkedin" ? scopes.find((sc) => !ctx.s.app.linkedinScopes.has(sc)) : undefined;
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
  const n = nextSeq(ctx.s);
  const code = `code-${platform}-${n}`;
  ctx.codes.set(code, {
    platform,
    redirectUri,
    challenge: q.get("code_challenge"),
    used: false,
    user: isMeta(platform) ? metaUserId(ctx.s) : `user-${n}`,
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
            ? ctx.s.app.linkedinPartner
            : true,
  });
  const back = new URL(redirectUri);
  back.searchParams.set("code", code);
  back.searchParams.set("state", q.get("state")!);
  return new Response(null, { status: 302, headers: { location: back.toString() } });
}

async function tokenEndpoint(ctx: OAuthCtx, c: AuthCall): Promise<Response> {
  const { platform, req } = c;
  if (platform === "reddit" && !REDDIT_UA.test(req.headers.get("user-agent") ?? ""))
    return json(429, { message: "Too Many Requests", error: 429 });
  // Client authentication: Basic for X's confidential clients and Reddit, form fields elsewhere.
  const form = new URLSearchParams(await req.text());
  const basic = (req.headers.get("authorization") ?? "").replace(/^Basic\s+/i, "");
  const [bid, bsecret] = basic ? Buffer.from(basic, "base64").toString().split(":") : [];
  const id = bid ?? form.get(platform === "tiktok" ? "client_key" : "client_id");
  const secret = bsecret ?? form.get("client_secret");
  const client = clientOf(platform);
  if (id !== client.id || secret !== client.secret)
    return oauthError(401, "invalid_client", "client authentication failed");
  const grant = form.get("grant_type");
  if (grant === "authorization_code") return codeGrant(ctx, platform, form);
  if (grant === "refresh_token" && !isMeta(platform)) return refreshGrant(ctx, platform, form);
  return oauthError(400, "unsupported_grant_type", `grant_type ${grant ?? "(none)"}`);
}

/**
 * A code is good once, for the redirect_uri it was issued to, with the PKCE verifier of its
 * challenge (RFC 6749 §4.1.3, RFC 7636 §4.6): a replayed code is `invalid_grant`.
 */
function codeGrant(ctx: OAuthCtx, platform: SocialPlatform, form: URLSearchParams): Response {
  const c = ctx.codes.get(form.get("code") ?? "");
  if (!c || c.platform !== platform || c.used)
    return oauthError(400, "invalid_grant", "the code is invalid or was already used");
  c.used = true;
  if (c.redirectUri !== form.get("redirect_uri"))
    return oauthError(400, "invalid_grant", "redirect_uri mismatch");
  if (c.challenge && s256(form.get("code_verifier") ?? "") !== c.challenge)
    return oauthError(400, "invalid_grant", "code_verifier does not match the challenge");
  if (isMeta(platform)) {
    // The short-lived token answer: `user_id` a JSON number (written raw: it is beyond 2^53)
    // (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login#step-2--exchange-the-code-for-a-token).
    const t = issue(ctx.s, platform, c.user, { lifetimeS: 3600, withRefresh: false, scopes: c.scopes });
    return new Response(
      `{"access_token":"${t.accessToken}","user_id":${c.user},"permissions":${JSON.stringify(c.scopes)}}`,
      { status: 200, headers: { "content-type": "application/json" } },
    );
  }
  const t = issue(ctx.s, platform, c.user, { withRefresh: c.refresh, scopes: c.scopes });
  return json(200, {
    access_token: t.accessToken,
    token_type: "bearer",
    expires_in: t.expiresIn,
    ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
    ...(platform === "tiktok" ? { open_id: c.user } : {}),
    scope: c.scopes.join(platform === "tiktok" ? "," : " "),
  });
}

async function refreshGrant(
  ctx: OAuthCtx,
  platform: SocialPlatform,
  form: URLSearchParams,
): Promise<Response> {
  await heldRefresh(ctx.s);
  // X and TikTok rotate refresh tokens: the one used is spent, a second use is refused
  // (https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token,
  // https://developers.tiktok.com/doc/oauth-user-access-token-management). Reddit and LinkedIn keep it.
  const rt = ctx.s.refreshTokens.get(form.get("refresh_token") ?? "");
  if (!rt || rt.platform !== platform || (ROTATES[platform] && rt.used))
    return oauthError(400, "invalid_grant", "the refresh token is invalid or was already used");
  rt.used = true;
  countRefresh(ctx.s, platform);
  const t = issue(ctx.s, platform, rt.user, { withRefresh: ROTATES[platform], scopes: rt.scopes });
  return json(200, {
    access_token: t.accessToken,
    token_type: "bearer",
    expires_in: t.expiresIn,
    ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
  });
}

/**
 * Meta long-lived tokens: the short-lived token exchanged (`ig_exchange_token` / `th_exchange_token`,
 * with the app secret), then the long-lived one refreshing itself (`ig_refresh_token` /
 * `th_refresh_token`) while valid and at least 24 hours old
 * (https://developers.facebook.com/docs/instagram-platform/reference/refresh_access_token,
 * https://developers.facebook.com/docs/threads/get-started/long-lived-tokens).
 */
async function metaLongLived(ctx: OAuthCtx, c: AuthCall): Promise<Response> {
  const { platform, path } = c;
  const q = c.url.searchParams;
  const prefix = platform === "instagram" ? "ig" : "th";
  const token = q.get("access_token") ?? "";
  const t = ctx.s.issued.get(token);
  if (!t || t.platform !== platform || isExpired(ctx.s, token))
    return graphError(400, 190, "Error validating access token");
  if (path === "/access_token") {
    if (
      q.get("grant_type") !== `${prefix}_exchange_token` ||
      q.get("client_secret") !== clientOf(platform).secret
    )
      return graphError(400, 100, "grant_type and client_secret are required");
    const long = issue(ctx.s, platform, t.user, {
      lifetimeS: LIFETIME_S[platform],
      withRefresh: false,
      scopes: t.scopes,
    });
    return json(200, { access_token: long.accessToken, token_type: "bearer", expires_in: long.expiresIn });
  }
  if (q.get("grant_type") !== `${prefix}_refresh_token`)
    return graphError(400, 100, "grant_type is required");
  if (now(ctx.s) - t.issuedAt < 86_400_000)
    return graphError(400, 100, "the token must be at least 24 hours old");
  await heldRefresh(ctx.s);
  countRefresh(ctx.s, platform);
  const renewed = issue(ctx.s, platform, t.user, { withRefresh: false, scopes: t.scopes });
  return json(200, {
    access_token: renewed.accessToken,
    token_type: "bearer",
    expires_in: renewed.expiresIn,
  });
}
