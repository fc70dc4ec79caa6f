import { notifyWorkEnded, socialPosts, socialTargets } from "@site/db";
import { AppError, isUuid, notFound, type Principal } from "@site/domain/core";
import { and, eq } from "drizzle-orm";
import type { CreatePostBody, SocialPostView, UpdatePostBody } from "./models.ts";
import type { PlatformAdapters } from "./platform.ts";
import { parseScheduledAt } from "./post_checks.ts";
import type { PostContext } from "./post_context.ts";
import { readPost } from "./post_views.ts";
import { checkPost, targetRows } from "./posts.ts";

type PostRow = typeof socialPosts.$inferSelect;

/** The post of the organization, locked for this transaction; 404 when not the org's. */
async function lockPost(tx: PostContext["db"], orgId: string, postId: string): Promise<PostRow> {
  if (!isUuid(postId)) throw notFound("post");
  const [post] = await tx
    .select()
    .from(socialPosts)
    .where(and(eq(socialPosts.id, postId), eq(socialPosts.orgId, orgId)))
    .for("update");
  if (!post) throw notFound("post");
  return post;
}

const conflict = (status: string, what: string) =>
  new AppError("CONFLICT", `the post is ${status}: ${what}`, [{ field: "status", message: status }]);

/**
 * Changes a scheduled post (content, overrides, media, accounts, options, time), every check run again
 * on the result; 409 CONFLICT once publishing began. The row lock serializes it with the publisher's
 * claim, which makes the post `publishing` under the same lock.
 */
export async function updateSocialPost(
  ctx: PostContext,
  principal: Principal,
  postId: string,
  patch: UpdatePostBody,
  adapters: PlatformAdapters,
): Promise<SocialPostView> {
  const current = await readPost(ctx, principal.orgId, postId);
  if (current.status !== "scheduled") throw conflict(current.status, "only a scheduled post can be changed");
  const merged: CreatePostBody = {
    content: patch.content ?? current.content,
    platformOverrides: patch.platformOverrides ?? current.platformOverrides,
    accounts: patch.accounts ?? current.targets.map((t) => t.accountId),
    media: patch.media ?? current.media,
    platformOptions:
      patch.platformOptions ?? (current.platformOptions as CreatePostBody["platformOptions"] & object),
    scheduledAt: patch.scheduledAt ?? current.scheduledAt ?? undefined,
  };
  // A TikTok choice recorded without the user's (an unaudited app's default) is not a choice to keep.
  const tiktok = (merged.platformOptions as Record<string, { consent?: unknown }> | undefined)?.tiktok;
  if (!patch.platformOptions && tiktok && tiktok.consent !== true) merged.platformOptions = {};
  const now = ctx.clock.now();
  const scheduledAt = parseScheduledAt(merged.scheduledAt!, now);
  const post = await checkPost(ctx, principal, merged, adapters, { scheduled: true });
  await ctx.db.transaction(async (tx) => {
    const locked = await lockPost(tx, principal.orgId, postId);
    if (locked.status !== "scheduled")
      throw conflict(locked.status, "publishing began; it can no longer be changed");
    await tx
      .update(socialPosts)
      .set({
        content: post.content,
        platformOverrides: post.overrides,
        media: post.media,
        platformOptions: post.platformOptions,
        scheduledAt,
        updatedAt: now,
      })
      .where(eq(socialPosts.id, postId));
    await tx.delete(socialTargets).where(eq(socialTargets.postId, postId));
    await tx.insert(socialTargets).values(targetRows(postId, post.accountIds, post.accounts, scheduledAt));
    // Its waiters read it again: the time they wait for may have moved.
    await notifyWorkEnded(tx, postId);
  });
  return readPost(ctx, principal.orgId, postId);
}

/** Cancels a scheduled post (its targets too); a cancelled one stays so; 409 once publishing began. */
export async function cancelSocialPost(
  ctx: PostContext,
  principal: Principal,
  postId: string,
): Promise<SocialPostView> {
  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    const post = await lockPost(tx, principal.orgId, postId);
    if (post.status === "cancelled") return;
    if (post.status !== "scheduled") throw conflict(post.status, "only a scheduled post can be cancelled");
    await tx
      .update(socialPosts)
      .set({ status: "cancelled", updatedAt: now })
      .where(eq(socialPosts.id, postId));
    await tx
      .update(socialTargets)
      .set({ status: "cancelled", nextTryAt: null, endedAt: now })
      .where(eq(socialTargets.postId, postId));
    await notifyWorkEnded(tx, postId);
  });
  return readPost(ctx, principal.orgId, postId);
}

/** Deletes a scheduled or cancelled post; 409 for one that went out (its history stays). */
export async function deleteSocialPost(
  ctx: PostContext,
  principal: Principal,
  postId: string,
): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const post = await lockPost(tx, principal.orgId, postId);
    if (post.status !== "scheduled" && post.status !== "cancelled")
      throw conflict(post.status, "only a scheduled or cancelled post can be deleted");
    await tx.delete(socialPosts).where(eq(socialPosts.id, postId));
  });
}
