import { Elysia, t } from "elysia";
import { AppError, ListQuery } from "@site/domain/core";
import {
  ConnectAccountBody,
  ConnectConfirmBody,
  ConnectStartBody,
  confirmConnect,
  connectClearCookie,
  connectCookiesOf,
  connectSetCookie,
  finishConnect,
  PendingConnectionView,
  CreatorInfoView,
  tiktokCreatorInfo,
  startConnect,
  CreatePostBody,
  connectSocialAccount,
  createSocialPost,
  deleteSocialMedia,
  disconnectSocialAccount,
  GenerateImageBody,
  generateImages,
  getSocialPost,
  isSocialPlatform,
  listSocialMedia,
  prepareSocialUpload,
  RegisterSocialMediaBody,
  registerSocialMedia,
  SocialMediaView,
  SocialUploadBody,
  listSocialAccounts,
  listSocialPosts,
  PerformancePost,
  PerformanceQuery,
  SocialAccountView,
  SocialPostView,
  SocialPostWithMetrics,
  socialPerformance,
} from "@site/domain/social";
// The adapters live with the collector (apps/metrics, see DESIGN.md); publishing from the API uses the same ones.
import { createOAuthPort, createPlatformAdapters } from "@site/social";
import type { AppDeps } from "../deps.ts";
import type { AuthMacros } from "../auth.ts";
import { errors, queryOf } from "../schemas.ts";

/** Social accounts and posts (contract) and the performance report (spec); scope social:write. */
export function socialRoutes(deps: AppDeps, auth: AuthMacros) {
  const adapters = createPlatformAdapters(deps);
  const oauth = createOAuthPort(deps.config);
  const detail = (summary: string, description?: string) => ({
    summary,
    description,

    tags: ["social"],
  });
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/social/accounts",
      async ({ principal }) => {
        return { accounts: await listSocialAccounts(deps, principal) };
      },
      {
        scope: "social:write",
        response: { 200: t.Object({ accounts: t.Array(SocialAccountView) }), ...errors(401, 403) },
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
        scope: "social:write",
        body: ConnectAccountBody,
        response: {
          201: t.Object({ account: SocialAccountView }),
          200: t.Object({ account: SocialAccountView }),
          ...errors(400, 401, 403),
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
        scope: "social:write",
        body: ConnectStartBody,
        response: {
          201: t.Object({
            authorizeUrl: t.String({ description: "send the user here to authorize" }),
            state: t.String({
              description: "single use, valid 10 minutes, bound to this organization and this key's user",
            }),
          }),
          ...errors(400, 401, 403, 501),
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
        scope: "social:write",
        body: ConnectConfirmBody,
        response: { 201: t.Object({ account: SocialAccountView }), ...errors(400, 401, 403) },
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
        scope: "social:write",
        response: { 200: t.Object({ creatorInfo: CreatorInfoView }), ...errors(400, 401, 403, 404, 503) },
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
        scope: "social:write",
        response: { 204: t.Null(), ...errors(401, 403, 404) },
        detail: detail(
          "Disconnect a social account",
          "Erases its tokens; it is no longer listed or published to. Its posts' history stays; connecting the same platform account again revives it.",
        ),
      },
    )
    .get(
      "/api/v1/social/posts",
      async ({ principal, query }) => {
        return listSocialPosts(deps, principal, query);
      },
      {
        operation: "getSocialPosts",
        query: queryOf(ListQuery),
        response: {
          200: t.Object({ posts: t.Array(SocialPostView), nextCursor: t.Nullable(t.String()) }),
          ...errors(400, 401, 403),
        },
        detail: detail("List posts (newest first)"),
      },
    )
    .post(
      "/api/v1/social/posts",
      async ({ principal, body, set }) => {
        const post = await createSocialPost(deps, principal, body, adapters);
        set.status = 201;
        return { post };
      },
      {
        operation: "postSocialPosts",
        body: CreatePostBody,
        response: { 201: t.Object({ post: SocialPostView }), ...errors(400, 401, 403) },
        detail: detail(
          "Create a post and publish it on each account",
          "Each target is published through its platform's API; a target that fails says why in `error` and does not block the others. TikTok: on an app TikTok has audited (SOCIAL_TIKTOK_AUDITED), a TikTok target needs `platformOptions.tiktok` = {privacyLevel chosen by the user among GET /api/v1/social/accounts/{id}/creator-info's selectablePrivacyLevels, consent: true} (400 otherwise); on an unaudited app (the default) it is optional and the post goes out SELF_ONLY, the only level TikTok allows such an app (recorded with consent: null and the reason). Recorded with the post. Checked first, for every target, so that a refusal publishes nothing (400 VALIDATION_ERROR naming the field): the media each platform takes, and the text's length where the platform states one (X 280 weighted characters, a URL counting 23, an emoji or CJK character 2; Threads 500 characters, an emoji counting its UTF-8 bytes), on `platformOverrides.<platform>` when given, else `content`.",
        ),
      },
    )
    .get(
      "/api/v1/social/posts/:postId",
      async ({ principal, params }) => {
        return { post: await getSocialPost(deps, principal, params.postId) };
      },
      {
        scope: "social:write",
        response: { 200: t.Object({ post: SocialPostWithMetrics }), ...errors(401, 403, 404) },
        detail: detail("A post with each target's full snapshot series as `metrics`"),
      },
    )
    .get("/api/v1/social/media", async ({ principal, query }) => listSocialMedia(deps, principal, query), {
      operation: "getSocialMedia",
      query: queryOf(ListQuery),
      response: {
        200: t.Object({ media: t.Array(SocialMediaView), nextCursor: t.Nullable(t.String()) }),
        ...errors(400, 401, 403),
      },
      detail: detail(
        "List the social media library (newest first)",
        "Files that landed and passed the type check; `url` is the bare /api/media path, `thumbnailUrl` the same with a short-lived member grant.",
      ),
    })
    .post(
      "/api/v1/social/media",
      async ({ principal, body, set }) => {
        const media = await registerSocialMedia(deps, principal, body);
        set.status = 201;
        return { media };
      },
      {
        scope: "social:write",
        body: RegisterSocialMediaBody,
        response: { 201: t.Object({ media: SocialMediaView }), ...errors(400, 401, 403) },
        detail: detail(
          "Register a site library file in the social media library",
          "`url` is a /api/media/<key> path of a site of the organization; the file is not copied. Registering it again answers the same entry.",
        ),
      },
    )
    .delete(
      "/api/v1/social/media/:mediaId",
      async ({ principal, params, set }) => {
        await deleteSocialMedia(deps, principal, params.mediaId);
        set.status = 204;
        return null;
      },
      {
        scope: "social:write",
        response: { 204: t.Null(), ...errors(401, 403, 404, "CONFLICT", 503) },
        detail: detail(
          "Delete a file of the social media library",
          "Removes it from the library and deletes its stored bytes (and the JPEG made from it for JPEG-only platforms), giving their size back to the organization's storage quota. A registered site library file is only unlisted here: its bytes stay with the site. 404 for an id that is not a listed file of the organization; 409 CONFLICT while a post not yet published lists it (a published post's file may go).",
        ),
      },
    )
    .post(
      "/api/v1/social/media/upload",
      async ({ principal, body, set }) => {
        const out = await prepareSocialUpload(deps, principal, body);
        set.status = 201;
        return out;
      },
      {
        scope: "social:write",
        body: SocialUploadBody,
        response: {
          201: t.Object({
            media: SocialMediaView,
            upload: t.Object({
              url: t.String(),
              method: t.Literal("PUT"),
              headers: t.Record(t.String(), t.String()),
              expiresInSeconds: t.Integer(),
            }),
          }),
          ...errors(400, 401, 403),
        },
        detail: detail(
          "Prepare a signed upload into the social media library",
          "PUT the bytes to `upload.url` with exactly `upload.headers`. Images (JPEG, PNG, WebP, GIF) up to 10485760 bytes, MP4 up to SOCIAL_VIDEO_MAX_BYTES; the type is checked from the bytes when they land, and the file is listed only then. Counted against the organization's storage quota (403 when it would be exceeded).",
        ),
      },
    )
    .post(
      "/api/v1/social/media/generate",
      async ({ principal, body, set }) => {
        const out = await generateImages(deps, principal, body);
        set.status = 201;
        return out;
      },
      {
        scope: "social:write",
        body: GenerateImageBody,
        response: {
          201: t.Object({ media: t.Array(SocialMediaView), creditsCharged: t.Integer() }),
          ...errors(400, 401, 402, 403, 501, 502),
        },
        detail: detail(
          "Generate images into the social media library",
          "An OpenAI-compatible images endpoint (IMAGE_API_BASE, IMAGE_API_KEY, IMAGE_MODEL). Costs IMAGE_CREDITS_PER_IMAGE (default 10) AI credits per image, debited when the request is recorded: 402 QUOTA_EXCEEDED without enough; 501 NOT_CONFIGURED without IMAGE_API_BASE (nothing charged); 502 RENDERER_ERROR when the provider fails (credits refunded, once); 403 when the storage quota is full (refunded).",
        ),
      },
    )
    .get(
      "/api/v1/social/performance",
      async ({ principal, query }) => {
        return socialPerformance(deps, principal, query);
      },
      {
        scope: "social:write",
        query: queryOf(PerformanceQuery),
        response: { 200: t.Object({ posts: t.Array(PerformancePost) }), ...errors(400, 401, 403) },
        detail: detail(
          "Social performance report",
          "Posts published in the last `days`, newest first; each target with `first` (earliest snapshot) and `latest` (most recent), both null for a post published less than about an hour ago. A null metric means the platform does not expose it or the token cannot read it; `extra.unavailable` says which and why.",
        ),
      },
    );
}

/**
 * The OAuth callback the platforms send the user back to (no bearer: the single-use state carries the
 * organization and the starting user). The code is exchanged at once (codes live seconds to minutes).
 * The browser that started the connect (its `sca_connect` cookie matches the state) gets the contract's
 * answer: 302 redirectUri?account=<id> or 200 {account}. Any other browser gets the confirmation step
 * (decisions 1016, 1030): 302 redirectUri?state=&confirm= or 200 {pending}. Errors: ?error=<code> or the
 * error body.
 */
export function socialOAuthCallbackRoutes(deps: AppDeps) {
  const oauth = createOAuthPort(deps.config);
  return new Elysia().get(
    "/api/v1/social/oauth/:platform/callback",
    async ({ params, query, set, request }) => {
      if (!isSocialPlatform(params.platform)) throw new AppError("NOT_FOUND", "no such platform");
      const cookies = connectCookiesOf(request.headers.get("cookie"));
      const out = await finishConnect(deps, params.platform, query, oauth, cookies);
      if (cookies.length > 0) set.headers["set-cookie"] = connectClearCookie(deps.config);
      set.headers["cache-control"] = "no-store";
      if (out.redirectUri) {
        const u = new URL(out.redirectUri);
        if (!out.ok) u.searchParams.set("error", out.code);
        else if ("account" in out) u.searchParams.set("account", out.account.id);
        else {
          u.searchParams.set("state", out.pending.state);
          u.searchParams.set("confirm", out.pending.confirm);
        }
        set.status = 302;
        set.headers.location = u.toString();
        // A confirmation may be in the address: it must not leak to another site through Referer.
        set.headers["referrer-policy"] = "no-referrer";
        return null;
      }
      if (!out.ok) throw out.error;
      return "account" in out ? { account: out.account } : { pending: out.pending };
    },
    {
      query: t.Object({
        code: t.Optional(t.String({ maxLength: 4096 })),
        state: t.Optional(t.String({ maxLength: 200 })),
        error: t.Optional(t.String({ maxLength: 200 })),
        error_description: t.Optional(t.String({ maxLength: 2000 })),
      }),
      response: {
        200: t.Union([
          t.Object({ account: SocialAccountView }, { description: "the browser that started the connect" }),
          t.Object(
            { pending: PendingConnectionView },
            { description: "another browser: the starting user confirms it" },
          ),
        ]),
        302: t.Null({
          description:
            "to the connect call's redirectUri: ?account=<id> (the browser that started the connect), ?state=<state>&confirm=<token> (another browser) or ?error=<code>",
        }),
        ...errors(400, 404, 503),
      },
      detail: {
        summary: "OAuth callback of a platform (no bearer)",
        description:
          "Exchanges the code for access and refresh tokens. The browser that started the connect (it carries the `sca_connect` cookie the connect answer set for this state) gets the account stored at once: 302 to the redirectUri with ?account=<id>, or 200 {account}. Any other browser cannot link an account by itself (a victim approving someone else's authorize URL): the tokens are held encrypted and this browser gets a one-time `confirm` (302 ?state=&confirm=, or 200 {pending}), which only the user who started the connection can confirm (POST /api/v1/social/accounts/connect/confirm). An unknown, expired or used state, or a code the platform refuses (replayed), is 400 VALIDATION_ERROR (or ?error= on the redirect).",
        tags: ["social"],
      },
    },
  );
}
