import {
  CreatePostBody,
  cancelSocialPost,
  createSocialPost,
  deleteSocialPost,
  getSocialPost,
  listSocialPosts,
  PerformanceQuery,
  PerformanceReport,
  type PlatformAdapters,
  SocialPostAnswer,
  SocialPostDetail,
  SocialPostListQuery,
  SocialPostPage,
  socialPerformance,
  UpdatePostBody,
  updateSocialPost,
} from "@site/domain/social";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

/** Social posts (contract): list, create and publish, read one with its metrics; and the performance report (spec). */
export function socialPostRoutes(deps: AppDeps, auth: AuthMacros, adapters: PlatformAdapters) {
  const detail = (summary: string, description?: string) => ({ summary, description, tags: ["social"] });
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/social/posts",
      async ({ principal, query }) => {
        return listSocialPosts(deps, principal, query);
      },
      {
        operation: "listSocialPosts",
        scope: "social:write",
        query: queryOf(SocialPostListQuery),
        response: {
          200: SocialPostPage,
          ...errors(400),
        },
        detail: detail(
          "List posts: the calendar",
          "Posts of the organization by `status`, within [`from`, `to`) of their time on the calendar (a scheduled or cancelled post's `scheduledAt`, the others' `publishedAt`), latest first.",
        ),
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
        operation: "createSocialPost",
        scope: "social:write",
        body: CreatePostBody,
        response: { 201: SocialPostAnswer, ...errors(400) },
        detail: detail(
          "Create a post and publish it on each account, at once or at `scheduledAt`",
          "A post is stored with its targets and each target is published by a background job, by any process. With `scheduledAt` (ISO 8601 with offset, later than now, at most 365 days ahead) it answers at once with `status: scheduled`; without, it waits at most SOCIAL_PUBLISH_WAIT_S for its targets and answers what it knows: a target still working (a video being processed, a rate-limit wait) is `publishing` and ends in the background, with its webhook. Every check below runs at creation and again at publish time. Each target is published through its platform's API; a target that fails says why in `error` and does not block the others. TikTok: on an app TikTok has audited (SOCIAL_TIKTOK_AUDITED), a TikTok target needs `platformOptions.tiktok` = {privacyLevel chosen by the user among GET /api/v1/social/accounts/{id}/creator-info's selectablePrivacyLevels, consent: true} (400 otherwise); on an unaudited app (the default) it is optional and the post goes out SELF_ONLY, the only level TikTok allows such an app (recorded with consent: null and the reason). Recorded with the post. Checked first, for every target, so that a refusal publishes nothing (400 VALIDATION_ERROR naming the field): the media each platform takes, and the text's length where the platform states one (X 280 weighted characters, a URL counting 23, an emoji or CJK character 2; Threads 500 characters, an emoji counting its UTF-8 bytes), on `platformOverrides.<platform>` when given, else `content`.",
        ),
      },
    )
    .get(
      "/api/v1/social/posts/:postId",
      async ({ principal, params }) => {
        return { post: await getSocialPost(deps, principal, params.postId) };
      },
      {
        operation: "getSocialPost",
        scope: "social:write",
        response: { 200: SocialPostDetail, ...errors(404) },
        detail: detail("A post with each target's full snapshot series as `metrics`"),
      },
    )
    .patch(
      "/api/v1/social/posts/:postId",
      async ({ principal, params, body }) => {
        return { post: await updateSocialPost(deps, principal, params.postId, body, adapters) };
      },
      {
        operation: "updateSocialPost",
        scope: "social:write",
        body: UpdatePostBody,
        response: { 200: SocialPostAnswer, ...errors(400, 404, 409) },
        detail: detail(
          "Change a scheduled post",
          "Any of content, platformOverrides, media, accounts, platformOptions, scheduledAt; every check runs again on the result. 409 CONFLICT once publishing began.",
        ),
      },
    )
    .post(
      "/api/v1/social/posts/:postId/cancel",
      async ({ principal, params }) => {
        return { post: await cancelSocialPost(deps, principal, params.postId) };
      },
      {
        operation: "cancelSocialPost",
        scope: "social:write",
        response: { 200: SocialPostAnswer, ...errors(404, 409) },
        detail: detail(
          "Cancel a scheduled post",
          "`scheduled` → `cancelled`; 409 CONFLICT once publishing began.",
        ),
      },
    )
    .delete(
      "/api/v1/social/posts/:postId",
      async ({ principal, params, set }) => {
        await deleteSocialPost(deps, principal, params.postId);
        set.status = 204;
      },
      {
        operation: "deleteSocialPost",
        scope: "social:write",
        response: { 204: t.Void(), ...errors(404, 409) },
        detail: detail(
          "Delete a scheduled or cancelled post",
          "409 CONFLICT for a post that went out (its history stays).",
        ),
      },
    )
    .get(
      "/api/v1/social/performance",
      async ({ principal, query }) => {
        return socialPerformance(deps, principal, query);
      },
      {
        operation: "getSocialPerformance",
        scope: "social:write",
        query: queryOf(PerformanceQuery),
        response: { 200: PerformanceReport, ...errors(400) },
        detail: detail(
          "Social performance report",
          "Posts published in the last `days`, newest first; each target with `first` (earliest snapshot) and `latest` (most recent), both null for a post published less than about an hour ago. A null metric means the platform does not expose it or the token cannot read it; `extra.unavailable` says which and why.",
        ),
      },
    );
}
