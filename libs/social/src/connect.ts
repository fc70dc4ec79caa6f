import type { Config } from "@site/config";
import { type OAuthPort, PlatformError, type SocialPlatform } from "@site/domain/social";
import { callPlatform, endpoint, ok } from "./_http.ts";
import { INSTAGRAM_API_BASE } from "./instagram.ts";
import { LINKEDIN_API_BASE } from "./linkedin.ts";
import { authorizeUrl, exchangeCode, OAUTH, type OAuthClient, pkcePair } from "./oauth.ts";
import { REDDIT_API_BASE } from "./reddit.ts";
import { X_API_BASE } from "./x.ts";

export { pkcePair };

type OAuthConfig = Pick<Config, "socialApiBase"> & {
  social: Pick<Config["social"], "clients" | "authBase">;
};

function clientOf(config: OAuthConfig, platform: SocialPlatform): OAuthClient {
  const c = config.social.clients[platform];
  if (!c) throw new PlatformError("rejected", `no OAuth client configured for ${platform}`);
  return { id: c.id, secret: c.secret, authBase: config.social.authBase[platform] ?? null };
}

/**
 * The platforms' OAuth for the connect flow: authorize URLs, the code exchange, and "who is this token"
 * where the token answer does not say it (X `GET /2/users/me`, Reddit `GET /api/v1/me`, LinkedIn's
 * OpenID `GET /v2/userinfo`); Instagram, Threads and TikTok give the user id with the token.
 */
export function createOAuthPort(config: OAuthConfig): OAuthPort {
  const base = config.socialApiBase;
  return {
    configured: (platform) => Boolean(config.social.clients[platform]),
    usesPkce: (platform) => OAUTH[platform].pkce,
    scopes: (platform) => OAUTH[platform].scopes,
    authorizeUrl: (platform, input) => authorizeUrl(platform, clientOf(config, platform), input),
    exchange: (platform, input) => exchangeCode(platform, clientOf(config, platform), input),
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
          headers: { ...auth, "user-agent": "server:site-content-api:1.0 (social publishing)" },
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
        const a = await callPlatform(
          endpoint(base.instagram ?? INSTAGRAM_API_BASE, "/me", { fields: "user_id,username" }),
          {
            headers: auth,
          },
        );
        const b = a.body as { user_id?: string; username?: string } | null;
        return ok(a) && b?.user_id ? { accountId: String(b.user_id), displayName: b.username ?? null } : null;
      }
      return null;
    },
  };
}
