import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { socialPosts, socialSnapshots, socialTargets } from "@site/db";
import type { Principal } from "./auth.ts";
import type { Context } from "./context.ts";
import { notFound, validationError } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { keysetPage, newestFirst, olderThan } from "./pagination.ts";
import { isSocialPlatform, loadAdapterAccounts } from "./social_accounts.ts";
import { PlatformError, type PlatformAdapters, type SocialPlatform } from "./social_platform.ts";

/** One publication of a post as the API answers it. */
export type SocialTargetView = {
  platform: SocialPlatform;
  accountId: string;
  url: string | null;
  status: "published" | "failed";
  error: string | null;
};

/** A snapshot as the API answers it. */
export type SnapshotView = {
  stage: number;
  views: number | null;
  likes: number | null;
  comments: number | null;
  shares: number | null;
  saves: number | null;
  extra: Record<string, unknown>;
  capturedAt: string;
};

/** A post as the API answers it. */
export type SocialPostView = {
  postId: string;
  content: string;
  platformOverrides: Record<string, string>;
  publishedAt: string | null;
  targets: SocialTargetView[];
};

/** The input of creating and publishing a post. */
export type CreatePostInput = { content?: unknown; platformOverrides?: unknown; accounts?: unknown };

function checkPostInput(input: CreatePostInput) {
  if (typeof input.content !== "string" || input.content.trim() === "")
    throw validationError("content", "required");
  if (input.content.length > 65_536) throw validationError("content", "at most 65536 characters");
  const overrides = input.platformOverrides ?? {};
  if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides))
    throw validationError("platformOverrides", "must be an object of platform -> text");
  for (const [k, v] of Object.entries(overrides)) {
    if (!isSocialPlatform(k)) throw validationError(`platformOverrides.${k}`, "unknown platform");
    if (typeof v !== "string" || v.trim() === "")
      throw validationError(`platformOverrides.${k}`, "must be a non-empty string");
  }
  const accounts = input.accounts;
  if (!Array.isArray(accounts) || accounts.length === 0)
    throw validationError("accounts", "at least one connected account id");
  if (accounts.length > 50) throw validationError("accounts", "at most 50 accounts");
  for (const a of accounts)
    if (typeof a !== "string" || !isUuid(a)) throw validationError("accounts", "must be account ids");
  return {
    content: input.content,
    overrides: overrides as Record<string, string>,
    accountIds: [...new Set(accounts as string[])],
  };
}

function publishError(err: unknown): string {
  if (err instanceof PlatformError) return `${err.kind}: ${err.message}`.slice(0, 500);
  return "the platform could not be reached";
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Creates a post and publishes it on each account through its platform adapter. A target that fails
 * says why and does not block the others; the post's `publishedAt` is its first successful publication.
 */
export async function createSocialPost(
  ctx: Context,
  principal: Principal,
  input: CreatePostInput,
  adapters: PlatformAdapters,
): Promise<SocialPostView> {
  const { content, overrides, accountIds } = checkPostInput(input);
  const accounts = await loadAdapterAccounts(ctx, principal.orgId, accountIds);
  const missing = accountIds.filter((id) => !accounts.some((a) => a.id === id));
  if (missing.length > 0) throw validationError("accounts", `not connected accounts: ${missing.join(", ")}`);
  const [post] = await ctx.db
    .insert(socialPosts)
    .values({ orgId: principal.orgId, content, platformOverrides: overrides })
    .returning({ id: socialPosts.id });
  const results = await Promise.all(
    accountIds.map(async (id) => {
      const account = accounts.find((a) => a.id === id)!;
      const adapter = adapters[account.platform];
      try {
        if (!adapter) throw new PlatformError("rejected", `no adapter for ${account.platform}`);
        const published = await adapter.publish(account, overrides[account.platform] ?? content);
        return { account, published, error: null };
      } catch (err) {
        ctx.log.warn("social publish failed", { platform: account.platform, cause: String(err) });
        return { account, published: null, error: publishError(err) };
      }
    }),
  );
  const targets = await ctx.db
    .insert(socialTargets)
    .values(
      results.map((r) => ({
        postId: post!.id,
        accountId: r.account.id,
        platform: r.account.platform,
        platformPostId: r.published?.platformPostId ?? null,
        url: r.published?.url ?? null,
        status: r.published ? ("published" as const) : ("failed" as const),
        error: r.error,
        publishedAt: r.published?.publishedAt ?? null,
      })),
    )
    .returning();
  const times = targets.flatMap((t) => (t.publishedAt ? [t.publishedAt.getTime()] : []));
  const publishedAt = times.length > 0 ? new Date(Math.min(...times)) : null;
  if (publishedAt) await ctx.db.update(socialPosts).set({ publishedAt }).where(eq(socialPosts.id, post!.id));
  return {
    postId: post!.id,
    content,
    platformOverrides: overrides,
    publishedAt: iso(publishedAt),
    targets: targets.map((t) => ({
      platform: t.platform as SocialPlatform,
      accountId: t.accountId,
      url: t.url,
      status: t.status,
      error: t.error,
    })),
  };
}

async function targetsOf(ctx: Context, postIds: string[]) {
  if (postIds.length === 0) return [];
  return ctx.db
    .select()
    .from(socialTargets)
    .where(inArray(socialTargets.postId, postIds))
    .orderBy(asc(socialTargets.createdAt), asc(socialTargets.id));
}

function targetView(t: typeof socialTargets.$inferSelect): SocialTargetView {
  return {
    platform: t.platform as SocialPlatform,
    accountId: t.accountId,
    url: t.url,
    status: t.status,
    error: t.error,
  };
}

/** The organization's posts, newest first, by keyset cursor. */
export async function listSocialPosts(
  ctx: Context,
  principal: Principal,
  opts: { cursor?: string; limit: number },
): Promise<{ posts: SocialPostView[]; nextCursor: string | null }> {
  const rows = await ctx.db
    .select({ post: socialPosts, at: sql<string>`${socialPosts.createdAt}::text` })
    .from(socialPosts)
    .where(
      and(
        eq(socialPosts.orgId, principal.orgId),
        olderThan(socialPosts.createdAt, socialPosts.id, opts.cursor),
      ),
    )
    .orderBy(...newestFirst(socialPosts.createdAt, socialPosts.id))
    .limit(opts.limit + 1);
  const { page, nextCursor } = keysetPage(rows, opts.limit, (r) => ({ at: r.at, id: r.post.id }));
  const targets = await targetsOf(
    ctx,
    page.map((r) => r.post.id),
  );
  return {
    posts: page.map(({ post }) => ({
      postId: post.id,
      content: post.content,
      platformOverrides: post.platformOverrides as Record<string, string>,
      publishedAt: iso(post.publishedAt),
      targets: targets.filter((t) => t.postId === post.id).map(targetView),
    })),
    nextCursor,
  };
}

/** One post with its targets and each target's full snapshot series as `metrics`; 404 if not the org's. */
export async function getSocialPost(
  ctx: Context,
  principal: Principal,
  postId: string,
): Promise<SocialPostView & { targets: (SocialTargetView & { metrics: SnapshotView[] })[] }> {
  if (!isUuid(postId)) throw notFound("post");
  const [post] = await ctx.db
    .select()
    .from(socialPosts)
    .where(and(eq(socialPosts.id, postId), eq(socialPosts.orgId, principal.orgId)));
  if (!post) throw notFound("post");
  const targets = await targetsOf(ctx, [post.id]);
  const snapshots =
    targets.length === 0
      ? []
      : await ctx.db
          .select()
          .from(socialSnapshots)
          .where(
            inArray(
              socialSnapshots.targetId,
              targets.map((t) => t.id),
            ),
          )
          .orderBy(asc(socialSnapshots.stage));
  return {
    postId: post.id,
    content: post.content,
    platformOverrides: post.platformOverrides as Record<string, string>,
    publishedAt: iso(post.publishedAt),
    targets: targets.map((t) => ({
      ...targetView(t),
      metrics: snapshots
        .filter((s) => s.targetId === t.id)
        .map((s) => ({
          stage: s.stage,
          views: s.views,
          likes: s.likes,
          comments: s.comments,
          shares: s.shares,
          saves: s.saves,
          extra: s.extra as Record<string, unknown>,
          capturedAt: s.capturedAt.toISOString(),
        })),
    })),
  };
}
