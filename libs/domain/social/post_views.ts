import { type Database, socialAccounts, socialPosts, socialSnapshots, socialTargets } from "@site/db";
import {
  type Context,
  decodeCursor,
  encodeCursor,
  isUuid,
  keysetPage,
  notFound,
  PAGE_LIMIT,
  type Principal,
  validationError,
} from "@site/domain/core";
import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type {
  SocialPostListQuery,
  SocialPostView,
  SocialPostWithMetrics,
  SocialTargetView,
} from "./models.ts";
import type { SocialPlatform } from "./platform.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

type PostRow = typeof socialPosts.$inferSelect;
type TargetRow = typeof socialTargets.$inferSelect;

async function targetsOf(ctx: Context, postIds: string[]) {
  if (postIds.length === 0) return [];
  return ctx.db
    .select({ target: socialTargets, accountStatus: socialAccounts.status })
    .from(socialTargets)
    .innerJoin(socialAccounts, eq(socialAccounts.id, socialTargets.accountId))
    .where(inArray(socialTargets.postId, postIds))
    .orderBy(asc(socialTargets.createdAt), asc(socialTargets.id));
}

function targetView(t: TargetRow): SocialTargetView {
  return {
    platform: t.platform as SocialPlatform,
    accountId: t.accountId,
    url: t.url,
    status: t.status,
    error: t.error,
    note: t.note,
  };
}

/**
 * A post as the API answers it. A scheduled post warns of each account that must be reconnected before
 * its time (its token was refused): the target would fail then.
 */
function postView(post: PostRow, targets: { target: TargetRow; accountStatus: string }[]): SocialPostView {
  const mine = targets.filter((t) => t.target.postId === post.id);
  return {
    postId: post.id,
    content: post.content,
    platformOverrides: post.platformOverrides as Record<string, string>,
    media: post.media,
    platformOptions: post.platformOptions as Record<string, unknown>,
    publishedAt: iso(post.publishedAt),
    status: post.status,
    scheduledAt: iso(post.scheduledAt),
    warnings:
      post.status !== "scheduled"
        ? []
        : mine
            .filter((t) => t.accountStatus !== "connected")
            .map((t) => ({
              code: "reconnect_required" as const,
              accountId: t.target.accountId,
              platform: t.target.platform as SocialPlatform,
              message: `the ${t.target.platform} account must be reconnected before ${iso(post.scheduledAt)}, or this target will fail`,
            })),
    targets: mine.map((t) => targetView(t.target)),
  };
}

/** One post of the organization as the API answers it (without metrics); 404 when not the org's. */
export async function readPost(ctx: Context, orgId: string, postId: string): Promise<SocialPostView> {
  if (!isUuid(postId)) throw notFound("post");
  // One snapshot for the post and its targets: a target's end commits with its post's state in one
  // statement, and two reads either side of it would show a post still publishing with every target
  // ended.
  const read = await ctx.db.transaction(
    async (tx) => {
      const [post] = await tx
        .select()
        .from(socialPosts)
        .where(and(eq(socialPosts.id, postId), eq(socialPosts.orgId, orgId)));
      return post
        ? { post, targets: await targetsOf({ ...ctx, db: tx as unknown as Database }, [post.id]) }
        : null;
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
  if (!read) throw notFound("post");
  return postView(read.post, read.targets);
}

/** A post's time on the calendar: `scheduledAt` while scheduled or cancelled, else when it went out. */
const calendarAt = sql<Date>`(case when ${socialPosts.status} in ('scheduled', 'cancelled')
  then ${socialPosts.scheduledAt}
  else coalesce(${socialPosts.publishedAt}, ${socialPosts.scheduledAt}, ${socialPosts.createdAt}) end)`;

function instant(field: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime()))
    throw validationError(field, "must be an ISO 8601 date or date and time");
  return d;
}

/**
 * The organization's posts, the calendar (CONTRACT "Social posts on their own clock"): by status, in
 * [from, to) of their calendar time (scheduled ones by `scheduledAt`, the rest by `publishedAt`), latest
 * first, by keyset cursor (decision 1473).
 */
export async function listSocialPosts(
  ctx: Context,
  principal: Principal,
  query: SocialPostListQuery,
): Promise<{ posts: SocialPostView[]; nextCursor: string | null }> {
  const limit = query.limit ?? PAGE_LIMIT.default;
  const from = instant("from", query.from);
  const to = instant("to", query.to);
  const conds: (SQL | undefined)[] = [eq(socialPosts.orgId, principal.orgId)];
  if (query.status) conds.push(eq(socialPosts.status, query.status));
  if (from) conds.push(sql`${calendarAt} >= ${from.toISOString()}::timestamptz`);
  if (to) conds.push(sql`${calendarAt} < ${to.toISOString()}::timestamptz`);
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    conds.push(sql`(${calendarAt}, ${socialPosts.id}) < (${after.at}::timestamptz, ${after.id}::uuid)`);
  }
  const rows = await ctx.db
    .select({ post: socialPosts, at: sql<string>`${calendarAt}::text` })
    .from(socialPosts)
    .where(and(...conds))
    .orderBy(desc(calendarAt), desc(socialPosts.id))
    .limit(limit + 1);
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.post.id }), encodeCursor);
  const targets = await targetsOf(
    ctx,
    page.map((r) => r.post.id),
  );
  return { posts: page.map(({ post }) => postView(post, targets)), nextCursor };
}

/** One post with its targets and each target's full snapshot series as `metrics`; 404 if not the org's. */
export async function getSocialPost(
  ctx: Context,
  principal: Pick<Principal, "orgId">,
  postId: string,
): Promise<SocialPostWithMetrics> {
  const view = await readPost(ctx, principal.orgId, postId);
  const targets = await ctx.db
    .select({ id: socialTargets.id })
    .from(socialTargets)
    .where(eq(socialTargets.postId, postId))
    .orderBy(asc(socialTargets.createdAt), asc(socialTargets.id));
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
    ...view,
    targets: view.targets.map((t, i) => ({
      ...t,
      metrics: snapshots
        .filter((s) => s.targetId === targets[i]!.id)
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
