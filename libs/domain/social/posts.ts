import { type Database, socialPosts, socialSnapshots, socialTargets } from "@site/db";
import {
  AppError,
  type Context,
  isUuid,
  keysetPage,
  type ListQuery,
  newestFirst,
  notFound,
  olderThan,
  PAGE_LIMIT,
  type Principal,
  validationError,
} from "@site/domain/core";
import type { MediaContext } from "@site/domain/media";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { isSocialPlatform, loadAdapterAccounts } from "./accounts.ts";
import { jpegVariant, loadPublishMedia } from "./media.ts";
import { platformMediaViolation, publishedTypeOn } from "./media_rules.ts";
import type { CreatePostBody, SocialPostView, SocialPostWithMetrics, SocialTargetView } from "./models.ts";
import { type PlatformAdapters, PlatformError, type SocialPlatform } from "./platform.ts";
import { publishWithShortWait } from "./rate_limit.ts";
import { postTextViolations } from "./text_rules.ts";
import { assertPostVideos } from "./video_rules.ts";
import { recordPostEvents } from "./webhook_events.ts";

// The shape is CreatePostBody's; these are the rules a schema does not say.
function checkPostInput(input: CreatePostBody) {
  if (input.content.trim() === "") throw validationError("content", "required");
  const overrides = input.platformOverrides ?? {};
  for (const [k, v] of Object.entries(overrides)) {
    if (!isSocialPlatform(k)) throw validationError(`platformOverrides.${k}`, "unknown platform");
    if (v.trim() === "") throw validationError(`platformOverrides.${k}`, "must be a non-empty string");
  }
  for (const a of input.accounts) if (!isUuid(a)) throw validationError("accounts", "must be account ids");
  const media = input.media ?? [];
  if (new Set(media).size !== media.length) throw validationError("media", "lists a file twice");
  return { content: input.content, overrides, accountIds: [...new Set(input.accounts)], media };
}

/**
 * A TikTok post's privacy as recorded with the post (decisions 1013, 1031): the user's choice with their
 * consent, or, on an app TikTok has not audited and without a choice in the request, SELF_ONLY (the only
 * level TikTok lets such an app post) with `consent: null` and the reason.
 */
type RecordedTikTok =
  | { privacyLevel: string; consent: true; consentedAt: string; consentedBy: string }
  | { privacyLevel: "SELF_ONLY"; consent: null; consentedAt: null; consentedBy: null; reason: string };

type RecordedOptions = { tiktok?: RecordedTikTok };

/** Why an unaudited app's TikTok post without a privacy choice goes out SELF_ONLY. */
export const TIKTOK_UNAUDITED_REASON = "unaudited app: private only";

/**
 * The per-platform choices a post must carry, checked before anything is published, and recorded with
 * who consented when (decisions 1013, 1031). TikTok, audited app (SOCIAL_TIKTOK_AUDITED): the user's
 * privacy level (no default, TikTok's UX rules,
 * https://developers.tiktok.com/doc/content-sharing-guidelines#step_2_metadata) and their consent are
 * required. Unaudited app (the default): TikTok restricts every post to private viewing
 * (https://developers.tiktok.com/doc/content-posting-api-get-started#step_3), so there is nothing to
 * choose: `platformOptions.tiktok` is optional and the post goes out SELF_ONLY; a choice given is still
 * checked (SELF_ONLY, consent true) and recorded.
 */
function recordedOptions(
  ctx: Context,
  principal: Principal,
  platforms: SocialPlatform[],
  input: CreatePostBody,
): RecordedOptions {
  const out: RecordedOptions = {};
  const tiktok = input.platformOptions?.tiktok;
  if (!platforms.includes("tiktok")) return out;
  const audited = ctx.config.social.tiktokAudited;
  if (!tiktok) {
    if (audited)
      throw validationError(
        "platformOptions.tiktok",
        "a TikTok target needs the privacy level the user chose ({privacyLevel, consent: true}); nothing was published",
      );
    out.tiktok = {
      privacyLevel: "SELF_ONLY",
      consent: null,
      consentedAt: null,
      consentedBy: null,
      reason: TIKTOK_UNAUDITED_REASON,
    };
    return out;
  }
  if (tiktok.consent !== true)
    throw validationError(
      "platformOptions.tiktok.consent",
      "the user's consent to TikTok's Music Usage Confirmation is required; nothing was published",
    );
  if (!audited && tiktok.privacyLevel !== "SELF_ONLY")
    throw validationError(
      "platformOptions.tiktok.privacyLevel",
      "this app is not audited by TikTok (SOCIAL_TIKTOK_AUDITED): its posts can only be SELF_ONLY; nothing was published",
    );
  out.tiktok = {
    privacyLevel: tiktok.privacyLevel,
    consent: true,
    consentedAt: ctx.clock.now().toISOString(),
    consentedBy: principal.userId,
  };
  return out;
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
  ctx: MediaContext,
  principal: Principal,
  input: CreatePostBody,
  adapters: PlatformAdapters,
): Promise<SocialPostView> {
  const { content, overrides, accountIds, media: mediaIds } = checkPostInput(input);
  const accounts = await loadAdapterAccounts(ctx, principal.orgId, accountIds, adapters, ctx.clock.now());
  const missing = accountIds.filter((id) => !accounts.some((a) => a.id === id));
  if (missing.length > 0) throw validationError("accounts", `not connected accounts: ${missing.join(", ")}`);
  // Every target's platform must accept the post before anything is published anywhere: its text
  // within the platform's limit (decision 1301), then its media.
  const platforms = [...new Set(accounts.map((a) => a.platform))];
  const tooLong = postTextViolations(platforms, content, overrides);
  if (tooLong.length > 0)
    throw new AppError(
      "VALIDATION_ERROR",
      `${tooLong.map((t) => `${t.field}: ${t.message}`).join("; ")}; nothing was published`,
      tooLong,
    );
  const media = await loadPublishMedia(ctx, principal.orgId, mediaIds);
  const broken = platforms.flatMap((platform) => {
    const why = platformMediaViolation(platform, media, { convert: true });
    return why ? [{ field: `media (${platform})`, message: why }] : [];
  });
  if (broken.length > 0)
    throw new AppError(
      "VALIDATION_ERROR",
      `media: ${broken.map((b) => b.message).join("; ")}; nothing was published`,
      broken,
    );
  // Each video against each target platform's documented video rules, before any upload (issue 33).
  await assertPostVideos(platforms, media);
  const platformOptions = recordedOptions(ctx, principal, platforms, input);
  // Each platform's files: a JPEG made once per file where the platform takes JPEG only (decision 1003).
  const variants = new Map<string, Promise<(typeof media)[number]>>();
  const mediaFor = new Map<SocialPlatform, typeof media>();
  for (const platform of platforms)
    mediaFor.set(
      platform,
      await Promise.all(
        media.map((m) => {
          if (m.kind !== "image" || publishedTypeOn(platform, m.contentType) === m.contentType)
            return Promise.resolve(m);
          let v = variants.get(m.id);
          if (!v) {
            v = jpegVariant(ctx, principal.orgId, m);
            variants.set(m.id, v);
          }
          return v;
        }),
      ),
    );
  const [post] = await ctx.db
    .insert(socialPosts)
    .values({
      orgId: principal.orgId,
      content,
      platformOverrides: overrides,
      media: mediaIds,
      platformOptions,
    })
    .returning({ id: socialPosts.id });
  const results = await Promise.all(
    accountIds.map(async (id) => {
      const account = accounts.find((a) => a.id === id)!;
      const adapter = adapters[account.platform];
      try {
        if (!adapter) throw new PlatformError("rejected", `no adapter for ${account.platform}`);
        const ready = await account.ready();
        // A rate-limit wait short enough for the request is slept through once (decision 1490); a
        // longer one fails the target with the platform's words, as before.
        const published = await publishWithShortWait(() =>
          adapter.publish(ready, {
            text: overrides[account.platform] ?? content,
            media: mediaFor.get(account.platform) ?? media,
            ...(account.platform === "tiktok" && platformOptions.tiktok
              ? { tiktok: { privacyLevel: platformOptions.tiktok.privacyLevel } }
              : {}),
          }),
        );
        return { account, published, error: null };
      } catch (err) {
        ctx.log.warn("social publish failed", { platform: account.platform, cause: err });
        return { account, published: null, error: publishError(err) };
      }
    }),
  );
  // The outcome and its webhook events commit together (the outbox, decisions 0840, 0843).
  const { targets, publishedAt } = await ctx.db.transaction(async (tx) => {
    const targets = await tx
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
          note: r.published?.note ?? null,
          publishedAt: r.published?.publishedAt ?? null,
        })),
      )
      .returning();
    const times = targets.flatMap((t) => (t.publishedAt ? [t.publishedAt.getTime()] : []));
    const publishedAt = times.length > 0 ? new Date(Math.min(...times)) : null;
    if (publishedAt) await tx.update(socialPosts).set({ publishedAt }).where(eq(socialPosts.id, post!.id));
    await recordPostEvents(tx, principal.orgId, targets, () =>
      getSocialPost({ ...ctx, db: tx as unknown as Database }, principal, post!.id),
    );
    return { targets, publishedAt };
  });
  return {
    postId: post!.id,
    content,
    platformOverrides: overrides,
    media: mediaIds,
    platformOptions,
    publishedAt: iso(publishedAt),
    targets: targets.map((t) => ({
      platform: t.platform as SocialPlatform,
      accountId: t.accountId,
      url: t.url,
      status: t.status,
      error: t.error,
      note: t.note,
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
    note: t.note,
  };
}

/** The organization's posts, newest first, by keyset cursor. */
export async function listSocialPosts(
  ctx: Context,
  principal: Principal,
  query: ListQuery,
): Promise<{ posts: SocialPostView[]; nextCursor: string | null }> {
  const limit = query.limit ?? PAGE_LIMIT.default;
  const rows = await ctx.db
    .select({ post: socialPosts, at: sql<string>`${socialPosts.createdAt}::text` })
    .from(socialPosts)
    .where(
      and(
        eq(socialPosts.orgId, principal.orgId),
        olderThan(socialPosts.createdAt, socialPosts.id, query.cursor),
      ),
    )
    .orderBy(...newestFirst(socialPosts.createdAt, socialPosts.id))
    .limit(limit + 1);
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.post.id }));
  const targets = await targetsOf(
    ctx,
    page.map((r) => r.post.id),
  );
  return {
    posts: page.map(({ post }) => ({
      postId: post.id,
      content: post.content,
      platformOverrides: post.platformOverrides as Record<string, string>,
      media: post.media,
      platformOptions: post.platformOptions as Record<string, unknown>,
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
): Promise<SocialPostWithMetrics> {
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
    media: post.media,
    platformOptions: post.platformOptions as Record<string, unknown>,
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
