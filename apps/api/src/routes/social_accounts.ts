import {
  ConnectAccountBody,
  ConnectConfirmBody,
  ConnectStartBody,
  ConnectStarted,
  CreatorInfoAnswer,
  confirmConnect,
  connectSetCookie,
  connectSocialAccount,
  disconnectSocialAccount,
  listSocialAccounts,
  type PlatformAdapters,
  SocialAccountAnswer,
  SocialAccountList,
  startConnect,
  tiktokCreatorInfo,
} from "@site/domain/social";
import { createOAuthPort } from "@site/social";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/**
 * Connected social accounts (contract): list, connect with a token or through OAuth (start and
 * confirm), a TikTok account's posting options, disconnect; scope social:write. The platforms' OAuth
 * callback is in social_oauth.ts.
 */
export function socialAccountRoutes(deps: AppDeps, auth: AuthMacros, adapters: PlatformAdapters) {
  const oauth = createOAuthPort(deps.config);
  const detail = (summary: string, description?: string) => ({ summary, description, tags: ["social"] });
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/social/accounts",
      async ({ principal }) => {
        return { accounts: await listSocialAccounts(deps, principal) };
      },
      {
        operation: "listSocialAccounts",
        scope: "social:write",
        response: { 200: SocialAccountList },
        detail: detail("List connected social accounts (tokens are never returned)"),
      },
    )
    .post(
      "/api/v1/social/accounts",
      async ({ principal, body, set }) => {
        const { account, created } = await connectSocialAccount(deps, principal, body);
        set.status = created ? 201 : 200;
        return { account };
      },
      {
        operation: "connectSocialAccount",
        scope: "social:write",
        body: ConnectAccountBody,
        response: {
          201: SocialAccountAnswer,
          200: SocialAccountAnswer,
          ...errors(400),
        },
        detail: detail(
          "Connect a social account",
          "201 for a new account; connecting the same platform account again reconnects it (200): token, permissions and tier are replaced.",
        ),
      },
    )
    .post(
      "/api/v1/social/accounts/connect",
      async ({ principal, body, set }) => {
        const out = await startConnect(deps, principal, body, oauth);
        // This browser (if a browser made the call) is the one that started it: its callback completes at
        // once; any other browser gets the confirmation step (decision 1030).
        set.headers["set-cookie"] = connectSetCookie(deps.config, out.state);
        set.headers["cache-control"] = "no-store";
        set.status = 201;
        return out;
      },
      {
        operation: "startSocialConnection",
        scope: "social:write",
        body: ConnectStartBody,
        response: {
          201: ConnectStarted,
          ...errors(400, 501),
        },
        detail: detail(
          "Start connecting an account with OAuth",
          "Authorization code with state (and PKCE on X and TikTok), asking only for the scopes an ordinary app is granted (plus restricted ones the operator lists, e.g. SOCIAL_LINKEDIN_RESTRICTED_SCOPES=r_member_social; TikTok's video.list only with SOCIAL_TIKTOK_READ_METRICS) and for what yields a refresh token (X offline.access, Reddit duration=permanent). The answer sets an HttpOnly cookie `sca_connect` bound to the state (Path=/api/v1/social/oauth, 10 minutes; SameSite=None; Secure when PUBLIC_BASE_URL is https, else SameSite=Lax). The platform sends the user back to GET /api/v1/social/oauth/{platform}/callback: the browser carrying that cookie gets the account at once (302 redirectUri?account=<id>, or 200 {account}); any other browser gets a one-time `confirm` that the starting user confirms with POST /api/v1/social/accounts/connect/confirm (decisions 1016, 1030). `redirectUri` must be on an origin of SOCIAL_REDIRECT_ORIGINS (default PUBLIC_BASE_URL's), else 400. 501 NOT_CONFIGURED without SOCIAL_<PLATFORM>_CLIENT_ID.",
        ),
      },
    )
    .post(
      "/api/v1/social/accounts/connect/confirm",
      async ({ principal, body, set }) => {
        const account = await confirmConnect(deps, principal, body);
        set.status = 201;
        return { account };
      },
      {
        operation: "confirmSocialConnection",
        scope: "social:write",
        body: ConnectConfirmBody,
        response: { 201: SocialAccountAnswer, ...errors(400) },
        detail: detail(
          "Confirm a connection the platform granted",
          "For a callback that came back in another browser than the one that started the connection (no `sca_connect` cookie). Only the user whose key started the connection (same organization and user), with the `confirm` the callback gave the returning browser, within 10 minutes, once. Another user's confirmation is 403 and discards the connection; an unknown, expired, used or wrong confirmation is 400 VALIDATION_ERROR.",
        ),
      },
    )
    .get(
      "/api/v1/social/accounts/:accountId/creator-info",
      async ({ principal, params }) => ({
        creatorInfo: await tiktokCreatorInfo(deps, principal, params.accountId, adapters),
      }),
      {
        operation: "getSocialCreatorInfo",
        scope: "social:write",
        response: { 200: CreatorInfoAnswer, ...errors(400, 404, 503) },
        detail: detail(
          "A TikTok account's posting options (creator_info)",
          "TikTok requires the user to choose the privacy level of each post among these, with no default (POST /api/v1/social/posts platformOptions.tiktok.privacyLevel); `selectablePrivacyLevels` is SELF_ONLY alone until SOCIAL_TIKTOK_AUDITED. 400 for an account of another platform or one to reconnect; 503 when TikTok cannot answer.",
        ),
      },
    )
    .delete(
      "/api/v1/social/accounts/:accountId",
      async ({ principal, params, set }) => {
        await disconnectSocialAccount(deps, principal, params.accountId);
        set.status = 204;
        return null;
      },
      {
        operation: "disconnectSocialAccount",
        scope: "social:write",
        response: { 204: t.Null(), ...errors(404) },
        detail: detail(
          "Disconnect a social account",
          "Erases its tokens; it is no longer listed or published to. Its posts' history stays; connecting the same platform account again revives it.",
        ),
      },
    );
}
