import type { Context, Principal } from "@site/domain/core";
import { sql } from "drizzle-orm";
import {
  PERFORMANCE_LIMITS,
  type PerformancePost,
  type PerformanceQuery,
  type PerformanceReport,
} from "./models.ts";

/** Posts published more recently than this have no `first`/`latest` yet (the 1-hour stage). */
const FIRST_STAGE_MS = 3_600_000;

const snapshotJson = (alias: string) =>
  sql.raw(`case when ${alias}.stage is null then null else json_build_object(
  'stage', ${alias}.stage, 'views', ${alias}.views, 'likes', ${alias}.likes, 'comments', ${alias}.comments,
  'shares', ${alias}.shares, 'saves', ${alias}.saves, 'extra', ${alias}.extra,
  'capturedAt', to_char(${alias}.captured_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) end`);

/**
 * The performance report: the organization's posts published in the last `days`, newest first, each
 * target with its earliest and most recent snapshot. One query, whatever the page size.
 */
export async function socialPerformance(
  ctx: Context,
  principal: Principal,
  q: PerformanceQuery,
): Promise<PerformanceReport> {
  const days = q.days ?? PERFORMANCE_LIMITS.days.default;
  const limit = q.limit ?? PERFORMANCE_LIMITS.limit.default;
  const offset = q.offset ?? PERFORMANCE_LIMITS.offset.default;
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - days * 86_400_000);
  const settled = new Date(now.getTime() - FIRST_STAGE_MS);
  const rows = await ctx.db.execute<{ post: PerformancePost }>(sql`
    with page as (
      select p.id, p.content, p.platform_overrides, p.published_at
      from social_posts p
      where p.org_id = ${principal.orgId}::uuid and p.published_at is not null
        and p.published_at >= ${since.toISOString()}::timestamptz
      order by p.published_at desc, p.id desc
      limit ${limit} offset ${offset}
    )
    select json_build_object(
      'postId', page.id, 'content', page.content, 'platformOverrides', page.platform_overrides,
      'publishedAt', to_char(page.published_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'targets', coalesce((
        select json_agg(json_build_object(
          'platform', t.platform, 'accountId', t.account_id, 'url', t.url,
          'first', case when t.published_at > ${settled.toISOString()}::timestamptz then null else ${snapshotJson("f")} end,
          'latest', case when t.published_at > ${settled.toISOString()}::timestamptz then null else ${snapshotJson("l")} end
        ) order by t.created_at, t.id)
        from social_targets t
        left join lateral (
          select * from social_snapshots s where s.target_id = t.id order by s.stage asc limit 1
        ) f on true
        left join lateral (
          select * from social_snapshots s where s.target_id = t.id order by s.stage desc limit 1
        ) l on true
        where t.post_id = page.id and t.status = 'published'
      ), '[]'::json)
    ) as post
    from page
    order by page.published_at desc, page.id desc`);
  return { posts: (rows as unknown as { post: PerformancePost }[]).map((r) => r.post) };
}
