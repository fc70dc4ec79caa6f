import type { Config } from "@site/config";
import { type OAuthPort, PlatformError, type SocialPlatform } from "@site/domain/social";
import { callPlatform, endpoint, exactId, ok } from "./_http.ts";
import { LINKEDIN_API_BASE } from "./linkedin.ts";
import { authorizeUrl, exchangeCode, OAUTH, type OAuthClient, pkcePair, scopesOf } from "./oauth.ts";
import { REDDIT_API_BASE, redditUserAgent } from "./reddit.ts";
import { graphBase } from "./versions.ts";
import { X_API_BASE } from "./x.ts";

export { pkcePair };

type OAuthConfig = Pick<Config, "socialApiBase"> & {
  social: Pick<Config["social"], "clients" | "authBase"> &
    Partial<
      Pick<
        Config["social"],
        | "graphVersion"
        | "threadsVersion"
        | "linkedinRestrictedScopes"
        | "redditDeveloper"
        | "tiktokReadMetrics"
      >
    >;
};

function clientOf(config: OAuthConfig, platform: SocialPlatform): OAuthClient {
  const c = config.social.clients[platform];
  if (!c) throw new PlatformError("rejected", `no OAuth client configured for ${platform}`);
  return {
    id: c.id,
    secret: c.secret,
    authBase: config.social.authBase[platform] ?? null,
    // Besides the ordinary app's scopes: LinkedIn's restricted ones the app was granted (decision 1012),
    // TikTok's video.list when the operator reads TikTok metrics (decision 1032).
    extraScopes:
      platform === "linkedin"
        ? (config.social.linkedinRestrictedScopes ?? [])
        : platform === "tiktok" && config.social.tiktokReadMetrics
          ? ["video.list"]
          : [],
  };
}

/**
 * The platforms' OAuth for the connect flow: authorize URLs, the code exchange, and "who is this token"
 * (X `GET /2/users/me`, Reddit `GET /api/v1/me`, LinkedIn's OpenID `GET /v2/userinfo`, Instagram and
 * Threads `GET /me`); only TikTok's token answer names the user (`open_id`, a string).
 */
export function createOAuthPort(config: OAuthConfig): OAuthPort {
  const base = config.socialApiBase;
  const ua = (account: string | null) =>
    redditUserAgent(config.social.clients.reddit?.id ?? null, config.social.redditDeveloper, account);
  return {
    configured: (platform) => Boolean(config.social.clients[platform]),
    usesPkce: (platform) => OAUTH[platform].pkce,
    scopes: (platform) =>
      config.social.clients[platform]
        ? scopesOf(platform, clientOf(config, platform))
        : OAUTH[platform].scopes,
    authorizeUrl: (platform, input) => authorizeUrl(platform, clientOf(config, platform), input),
    exchange: (platform, input) =>
      exchangeCode(platform, clientOf(config, platform), { ...input, userAgent: ua(null) }),
    async identify(platform, accessToken) {
      const auth = { authorization: `Bearer ${accessToken}` };
      if (platform === "x") {
        // https://docs.x.com/x-api/users/get-my-user
        const a = await callPlatform(endpoint(base.x ?? X_API_BASE, "/users/me"), { headers: auth });
        const d = (a.body as { data?: { id?: string; username?: string } } | null)?.data;
        return ok(a) && d?.id ? { accountId: d.id, displayName: d.username ?? null } : null;
      }
      if (platform === "reddit") {
        // https://www.reddit.com/dev/api/#GET_api_v1_me : the user name is the account (profile u_<name>).
        const a = await callPlatform(endpoint(base.reddit ?? REDDIT_API_BASE, "/api/v1/me"), {
          headers: { ...auth, "user-agent": ua(null) },
        });
        const name = (a.body as { name?: string } | null)?.name;
        return ok(a) && name ? { accountId: name, displayName: name } : null;
      }
      if (platform === "linkedin") {
        // https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
        const a = await callPlatform(endpoint(base.linkedin ?? LINKEDIN_API_BASE, "/v2/userinfo"), {
          headers: auth,
        });
        const b = a.body as { sub?: string; name?: string } | null;
        return ok(a) && b?.sub ? { accountId: b.sub, displayName: b.name ?? null } : null;
      }
      if (platform === "instagram") {
        // Instagram API with Instagram Login: `GET graph.instagram.com/<version>/me?fields=user_id,username`;
        // `user_id` is the professional account's id that /<id>/media takes
        // (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started#get-started).
        const a = await callPlatform(
          endpoint(graphBase(config, "instagram"), "/me", { fields: "user_id,username" }),
          { headers: auth },
        );
        const id = exactId(a.raw, "user_id");
        const b = a.body as { username?: string } | null;
        return ok(a) && id ? { accountId: id, displayName: b?.username ?? null } : null;
      }
      if (platform === "threads") {
        // `GET graph.threads.net/v1.0/me?fields=id,username` (https://developers.facebook.com/docs/threads/threads-profiles):
        // the id every /<id>/threads call takes.
        const a = await callPlatform(
          endpoint(graphBase(config, "threads"), "/me", { fields: "id,username" }),
          {
            headers: auth,
          },
        );
        const id = exactId(a.raw, "id");
        const b = a.body as { username?: string } | null;
        return ok(a) && id ? { accountId: id, displayName: b?.username ?? null } : null;
      }
      return null;
    },
  };
}
