import { Type } from "@sinclair/typebox";
import { ListQuery } from "@site/domain/core";
import { RENDER_WAIT_MAX_S, waitUntilEnded } from "@site/domain/screenshots";
import {
  CreatePostBody,
  cancelSocialPost,
  createSocialPost,
  deleteSocialPost,
  getSocialPost,
  listSocialMedia,
  listSocialPosts,
  SocialMediaPage,
  SocialPostAnswer,
  SocialPostDeleted,
  SocialPostDetail,
  SocialPostListQuery,
  SocialPostPage,
  UpdatePostBody,
  updateSocialPost,
} from "@site/domain/social";
import { Cursor, UUID_PATTERN } from "./inputs.ts";
import { adapters } from "./social_adapters.ts";
import { type Tool, tool } from "./tool.ts";

const PostId = Type.String({
  pattern: UUID_PATTERN,
  maxLength: 36,
  description: "postId from create_social_post",
});

/** get_social_post waits at most this long for targets still publishing. */
const POST_WAIT_MAX_S = RENDER_WAIT_MAX_S;

/** The social media library and the organization's posts: create, schedule, change, cancel, list, read. */
export const SOCIAL_TOOLS: Tool[] = [
  tool({
    name: "list_social_media",
    title: "List the social media library",
    description:
      "Lists the organization's social media files (images and MP4 videos for social posts), newest first. Pass their `id`s as `media` to create_social_post; each platform checks the combination (Instagram: 1 file or 2–10, JPEG images (PNG and WebP are converted); TikTok: 1–35 JPEG/WebP photos or one video; X: up to 4 images or one video; Threads: text, one file or up to 20; LinkedIn: text or images; Reddit: text or one image). `thumbnailUrl` is a short-lived signed preview, never to be stored. Needs social:write.",
    operation: "listSocialMedia",
    output: SocialMediaPage,
    input: Type.Object({ ...ListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => ({ value: await listSocialMedia(deps, principal, args) }),
  }),
  tool({
    name: "list_social_posts",
    title: "List social posts (the calendar)",
    description:
      "Lists the organization's social posts, latest first, each with its status (scheduled, publishing, done, cancelled) and its targets' status and URL: optionally by `status` and within [`from`, `to`) (ISO 8601) of their time on the calendar (a scheduled post's scheduledAt, the others' publishedAt). Pass nextCursor back as cursor. Needs social:write.",
    operation: "listSocialPosts",
    output: SocialPostPage,
    input: Type.Object({ ...SocialPostListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => ({ value: await listSocialPosts(deps, principal, args) }),
  }),
  tool({
    name: "create_social_post",
    title: "Create a social post, now or scheduled",
    description:
      "Publishes a post on each connected account in `accounts` (ids from list_social_accounts; add one with connect_social_account or start_social_connection), with optional media ids from list_social_media; with `scheduledAt` (ISO 8601 with offset, later than now, at most 365 days ahead) it is scheduled instead and goes out then. Each platform's rules (text length, media combination, TikTok's privacyLevel and consent in platformOptions.tiktok) are checked for every target first: a refusal stores and publishes nothing; they are checked again at publish time. Without scheduledAt the answer waits a few seconds: a target still `publishing` (a video being processed, a rate-limit wait) ends in the background: call get_social_post with waitSeconds. A target that fails says why in its `error`. Needs social:write.",
    operation: "createSocialPost",
    output: SocialPostAnswer,
    input: CreatePostBody,
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const post = await createSocialPost(deps, principal, args, adapters(deps));
      const working = post.targets.some((t) => t.status === "publishing");
      return {
        value: { post },
        note: working
          ? `Still publishing; call get_social_post with postId ${post.postId} and waitSeconds: ${POST_WAIT_MAX_S}.`
          : undefined,
      };
    },
  }),
  tool({
    name: "get_social_post",
    title: "Read a social post",
    description:
      "One post with its targets (status, url, error) and each target's metrics snapshots. waitSeconds (0–25, default 0) waits on the server while a target is still publishing, or scheduled to go out before the wait is over, and answers as soon as it ends. Needs social:write.",
    operation: "getSocialPost",
    output: SocialPostDetail,
    input: Type.Object({
      postId: PostId,
      waitSeconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: POST_WAIT_MAX_S,
          description: "wait up to this long for targets still publishing",
        }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const seconds = Math.min(args.waitSeconds ?? 0, POST_WAIT_MAX_S);
      const until = deps.clock.now().getTime() + seconds * 1000;
      // Working: a target publishing, or one scheduled to go out before the wait is over. Waiters sleep
      // on the process's one LISTEN; the transaction that ends a target wakes its post's (decision 1517).
      const post = await waitUntilEnded(
        deps.renderWaits,
        args.postId,
        seconds,
        () => getSocialPost(deps, principal, args.postId),
        (p) =>
          p.targets.some(
            (t) =>
              t.status === "publishing" ||
              (t.status === "scheduled" && p.scheduledAt !== null && Date.parse(p.scheduledAt) <= until),
          ),
      );
      const open = post.targets.some((t) => t.status === "scheduled" || t.status === "publishing");
      const later = post.scheduledAt !== null && Date.parse(post.scheduledAt) > deps.clock.now().getTime();
      return {
        value: { post },
        note: !open
          ? undefined
          : later
            ? `Scheduled for ${post.scheduledAt}; call get_social_post with waitSeconds: ${POST_WAIT_MAX_S} when that time is under ${POST_WAIT_MAX_S} s away.`
            : `Still publishing; call get_social_post with postId ${post.postId} and waitSeconds: ${POST_WAIT_MAX_S} again.`,
      };
    },
  }),
  tool({
    name: "update_social_post",
    title: "Change a scheduled social post",
    description:
      "Changes a scheduled post: any of content, platformOverrides, media, accounts, platformOptions, scheduledAt; every check runs again. CONFLICT once publishing began. Needs social:write.",
    operation: "updateSocialPost",
    output: SocialPostAnswer,
    input: Type.Object({ postId: PostId, ...UpdatePostBody.properties }),
    readOnly: false,
    run: async (deps, principal, { postId, ...patch }) => ({
      value: { post: await updateSocialPost(deps, principal, postId, patch, adapters(deps)) },
    }),
  }),
  tool({
    name: "cancel_social_post",
    title: "Cancel a scheduled social post",
    description:
      "Cancels a scheduled post: it never goes out (status cancelled; delete_social_post removes it). CONFLICT once publishing began. Needs social:write.",
    operation: "cancelSocialPost",
    output: SocialPostAnswer,
    input: Type.Object({ postId: PostId }),
    readOnly: false,
    run: async (deps, principal, args) => ({
      value: { post: await cancelSocialPost(deps, principal, args.postId) },
    }),
  }),
  tool({
    name: "delete_social_post",
    title: "Delete a scheduled or cancelled social post",
    description:
      "Deletes a post that has not gone out (scheduled or cancelled): it leaves the calendar (list_social_posts). A post that went out, or is publishing, is a CONFLICT: its history stays. Needs social:write.",
    operation: "deleteSocialPost",
    output: SocialPostDeleted,
    input: Type.Object({ postId: PostId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await deleteSocialPost(deps, principal, args.postId);
      return {
        value: { deleted: true, postId: args.postId },
        note: `Post ${args.postId} is deleted; list_social_posts shows the calendar.`,
      };
    },
  }),
];
