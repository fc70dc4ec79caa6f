import { socialAccounts, socialPosts, socialTargets } from "@site/db";
import { type Context, type Principal, validationError } from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import { eq } from "drizzle-orm";
import { loadAdapterAccounts } from "./accounts.ts";
import type { CreatePostBody, SocialPostView } from "./models.ts";
import type { PlatformAdapters, SocialPlatform } from "./platform.ts";
import { checkMedia, checkPostInput, checkTexts, mediaForPlatform, parseScheduledAt } from "./post_checks.ts";
import type { PostContext } from "./post_context.ts";
import { recordedOptions } from "./post_options.ts";
import { readPost } from "./post_views.ts";
import { publishSlot, queuePublish } from "./publish_queue.ts";
import { publishTarget } from "./publish_target.ts";

export { TIKTOK_UNAUDITED_REASON } from "./post_options.ts";
export { getSocialPost, listSocialPosts } from "./post_views.ts";
export type { PostContext };

/**
 * Every check of a post (CONTRACT "Social posts on their own clock"): its shape, the accounts of the
 * organization (connected ones only for a scheduled post), each target platform's text limit and media
 * rules, and the per-platform choices (TikTok privacy and consent). Throws 400 naming what fails.
 */
export async function checkPost(
  ctx: MediaContext,
  principal: Principal,
  input: CreatePostBody,
  adapters: PlatformAdapters,
  opts: { scheduled: boolean },
) {
  const checked = checkPostInput(input);
  const accounts = await loadAdapterAccounts(
    ctx,
    principal.orgId,
    checked.accountIds,
    adapters,
    ctx.clock.now(),
  );
  const missing = checked.accountIds.filter((id) => !accounts.some((a) => a.id === id));
  if (missing.length > 0) throw validationError("accounts", `not connected accounts: ${missing.join(", ")}`);
  if (opts.scheduled) {
    const rows = await ctx.db
      .select({ id: socialAccounts.id, status: socialAccounts.status, platform: socialAccounts.platform })
      .from(socialAccounts)
      .where(eq(socialAccounts.orgId, principal.orgId));
    const toReconnect = rows.filter((r) => checked.accountIds.includes(r.id) && r.status !== "connected");
    if (toReconnect.length > 0)
      throw validationError(
        "accounts",
        `reconnect first: ${toReconnect.map((r) => `${r.platform} account ${r.id}`).join(", ")}`,
      );
  }
  const platforms = [...new Set(accounts.map((a) => a.platform))];
  // Every target's platform must accept the post before anything is published anywhere: its text
  // within the platform's limit (decision 1301), then its media.
  checkTexts(platforms, checked.content, checked.overrides);
  const media = await checkMedia(ctx, principal.orgId, platforms, checked.media);
  // The JPEG a platform needs is made now (once per file, reused at publish): bytes that cannot be
  // decoded answer 400 before anything is stored.
  for (const platform of platforms) await mediaForPlatform(ctx, principal.orgId, platform, media);
  const platformOptions = recordedOptions(ctx, principal, platforms, input);
  return { ...checked, accounts, platforms, platformOptions };
}

/**
 * Creates a post with one target per account and hands each target to a `social-publish` job (decision
 * 1470): at once, or at `scheduledAt`. An immediate post's answer waits at most SOCIAL_PUBLISH_WAIT_S for
 * its targets; those still working answer `publishing` and end in the background.
 */
export async function createSocialPost(
  ctx: PostContext,
  principal: Principal,
  input: CreatePostBody,
  adapters: PlatformAdapters,
): Promise<SocialPostView> {
  const now = ctx.clock.now();
  const scheduledAt = input.scheduledAt === undefined ? null : parseScheduledAt(input.scheduledAt, now);
  const post = await checkPost(ctx, principal, input, adapters, { scheduled: scheduledAt !== null });
  const postId = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(socialPosts)
      .values({
        orgId: principal.orgId,
        content: post.content,
        platformOverrides: post.overrides,
        media: post.media,
        platformOptions: post.platformOptions,
        status: scheduledAt ? "scheduled" : "publishing",
        scheduledAt,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: socialPosts.id });
    await tx
      .insert(socialTargets)
      .values(
        targetRows(
          row!.id,
          post.accountIds,
          post.accounts,
          scheduledAt ?? now,
          scheduledAt ? "scheduled" : "publishing",
        ),
      );
    return row!.id;
  });
  if (scheduledAt) return readPost(ctx, principal.orgId, postId);
  const targets = await ctx.db
    .select({ id: socialTargets.id, at: socialTargets.nextTryAt })
    .from(socialTargets)
    .where(eq(socialTargets.postId, postId));
  if (!ctx.queue) {
    await Promise.all(targets.map((t) => publishTarget(ctx, adapters, t.id)));
    return readPost(ctx, principal.orgId, postId);
  }
  for (const t of targets) await queuePublish(ctx, t.id, 0, publishSlot(t.at ?? now, now));
  return waitForTargets(ctx, principal.orgId, postId, ctx.config.social.publishWaitS * 1000);
}

/** The target rows of a post: one per account, `scheduled` until `at` (or `publishing` when it is now). */
export function targetRows(
  postId: string,
  accountIds: string[],
  accounts: { id: string; platform: SocialPlatform }[],
  at: Date,
  status: "scheduled" | "publishing" = "scheduled",
) {
  // One millisecond apart: the targets read back in the order of `accounts` (by created_at, id).
  const t0 = Date.now();
  return accountIds.map((id, i) => ({
    postId,
    createdAt: new Date(t0 + i),
    accountId: id,
    platform: accounts.find((a) => a.id === id)!.platform,
    status,
    nextTryAt: at,
  }));
}

/** How often the answer of POST looks whether its targets ended. */
const WAIT_POLL_MS = 100;

/** Reads the post until no target is still working, or `ms` passed (real time); answers what it knows. */
export async function waitForTargets(
  ctx: Context,
  orgId: string,
  postId: string,
  ms: number,
): Promise<SocialPostView> {
  const deadline = Date.now() + ms;
  for (;;) {
    const post = await readPost(ctx, orgId, postId);
    const open = post.targets.some((t) => t.status === "scheduled" || t.status === "publishing");
    if (!open || Date.now() >= deadline) return post;
    await new Promise((r) => setTimeout(r, Math.min(WAIT_POLL_MS, Math.max(1, deadline - Date.now()))));
  }
}
