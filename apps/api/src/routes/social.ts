import { Elysia, t } from "elysia";
import {
  connectSocialAccount,
  createSocialPost,
  getSocialPost,
  listSocialAccounts,
  listSocialPosts,
  parseLimit,
  parsePerformanceQuery,
  SOCIAL_PLATFORMS,
  socialPerformance,
} from "@site/domain";
// The adapters live with the collector (apps/metrics, see DESIGN.md); publishing from the API uses the same ones.
import { createPlatformAdapters } from "../../../metrics/src/platforms/mod.ts";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

const Platform = t.UnionEnum([...SOCIAL_PLATFORMS], {
  description: "instagram, threads, x, linkedin, reddit or tiktok",
});
const Metric = t.Nullable(
  t.Integer({
    description: "null when the platform does not expose it or the token cannot read it (never 0 then)",
  }),
);
const Snapshot = t.Object({
  stage: t.Integer({ description: "1 = ~1 h, 2 = ~24 h, 3 = ~72 h, 4 = ~7 d after publication" }),
  views: Metric,
  likes: Metric,
  comments: Metric,
  shares: Metric,
  saves: Metric,
  extra: t.Record(t.String(), t.Unknown(), {
    description: "further metrics (reach, quotes, upvoteRatio…) and `unavailable`: metric → why it is null",
  }),
  capturedAt: t.String({ description: "ISO 8601 UTC" }),
});
const Account = t.Object({
  id: t.String({ format: "uuid" }),
  platform: Platform,
  accountId: t.String({ description: "the platform's own account id" }),
  displayName: t.Nullable(t.String()),
  permissions: t.Array(t.String()),
  tier: t.Nullable(t.String()),
  connectedAt: t.String(),
});
const Target = t.Object({
  platform: Platform,
  accountId: t.String({ description: "id of the connected account" }),
  url: t.Nullable(t.String()),
  status: t.Union([t.Literal("published"), t.Literal("failed")]),
  error: t.Nullable(t.String({ description: "why publishing failed" })),
});
const Post = t.Object({
  postId: t.String({ format: "uuid" }),
  content: t.String(),
  platformOverrides: t.Record(t.String(), t.String()),
  publishedAt: t.Nullable(t.String()),
  targets: t.Array(Target),
});
const PostWithMetrics = t.Object({
  ...Post.properties,
  targets: t.Array(t.Object({ ...Target.properties, metrics: t.Array(Snapshot) })),
});
const PerformancePost = t.Object({
  postId: t.String(),
  content: t.String(),
  platformOverrides: t.Record(t.String(), t.String()),
  publishedAt: t.String(),
  targets: t.Array(
    t.Object({
      platform: t.String(),
      accountId: t.String(),
      url: t.String(),
      first: t.Nullable(Snapshot),
      latest: t.Nullable(Snapshot),
    }),
  ),
});

/** Social accounts and posts (contract) and the performance report (spec); scope social:write. */
export function socialRoutes(deps: AppDeps, guard: Guard) {
  const adapters = createPlatformAdapters(deps.config);
  const detail = (summary: string, description?: string) => ({
    summary,
    description,
    security: bearer,
    tags: ["social"],
  });
  return new Elysia()
    .get(
      "/api/v1/social/accounts",
      async ({ request }) => {
        const principal = await guard(request, "social:write");
        return { accounts: await listSocialAccounts(deps, principal) };
      },
      {
        ...guard.hook("social:write"),
        response: { 200: t.Object({ accounts: t.Array(Account) }), ...errors(401, 403) },
        detail: detail("List connected social accounts (tokens are never returned)"),
      },
    )
    .post(
      "/api/v1/social/accounts",
      async ({ request, body, set }) => {
        const principal = await guard(request, "social:write");
        const { account, created } = await connectSocialAccount(deps, principal, body);
        set.status = created ? 201 : 200;
        return { account };
      },
      {
        ...guard.hook("social:write"),
        body: t.Object({
          platform: Platform,
          accountId: t.String({ minLength: 1, maxLength: 200 }),
          displayName: t.Optional(t.String({ maxLength: 200 })),
          accessToken: t.String({
            minLength: 1,
            maxLength: 8192,
            description: "stored encrypted, never returned",
          }),
          permissions: t.Optional(
            t.Array(t.String(), {
              description: "granted permissions, e.g. instagram_manage_insights, threads_manage_insights",
            }),
          ),
          tier: t.Optional(
            t.Union([t.Literal("free"), t.Literal("basic"), t.Literal("pro")], {
              description: "API tier (x); free reads no metrics. Default free for x.",
            }),
          ),
        }),
        response: {
          201: t.Object({ account: Account }),
          200: t.Object({ account: Account }),
          ...errors(400, 401, 403),
        },
        detail: detail(
          "Connect a social account",
          "201 for a new account; connecting the same platform account again reconnects it (200): token, permissions and tier are replaced.",
        ),
      },
    )
    .get(
      "/api/v1/social/posts",
      async ({ request, query }) => {
        const principal = await guard(request, "social:write");
        return listSocialPosts(deps, principal, {
          cursor: query.cursor,
          limit: parseLimit(query.limit, 50, 100),
        });
      },
      {
        ...guard.hook("social:write"),
        query: t.Object({
          cursor: t.Optional(t.String()),
          limit: t.Optional(t.String({ description: "1..100, default 50" })),
        }),
        response: {
          200: t.Object({ posts: t.Array(Post), nextCursor: t.Nullable(t.String()) }),
          ...errors(400, 401, 403),
        },
        detail: detail("List posts (newest first)"),
      },
    )
    .post(
      "/api/v1/social/posts",
      async ({ request, body, set }) => {
        const principal = await guard(request, "social:write");
        const post = await createSocialPost(deps, principal, body, adapters);
        set.status = 201;
        return { post };
      },
      {
        ...guard.hook("social:write"),
        body: t.Object({
          content: t.String({ minLength: 1 }),
          platformOverrides: t.Optional(
            t.Record(t.String(), t.String(), { description: "platform -> text" }),
          ),
          accounts: t.Array(t.String(), { minItems: 1, description: "ids of connected accounts" }),
        }),
        response: { 201: t.Object({ post: Post }), ...errors(400, 401, 403) },
        detail: detail(
          "Create a post and publish it on each account",
          "Each target is published through its platform's API; a target that fails says why in `error` and does not block the others.",
        ),
      },
    )
    .get(
      "/api/v1/social/posts/:postId",
      async ({ request, params }) => {
        const principal = await guard(request, "social:write");
        return { post: await getSocialPost(deps, principal, params.postId) };
      },
      {
        ...guard.hook("social:write"),
        response: { 200: t.Object({ post: PostWithMetrics }), ...errors(401, 403, 404) },
        detail: detail("A post with each target's full snapshot series as `metrics`"),
      },
    )
    .get(
      "/api/v1/social/performance",
      async ({ request, query }) => {
        const principal = await guard(request, "social:write");
        return socialPerformance(deps, principal, parsePerformanceQuery(query));
      },
      {
        ...guard.hook("social:write"),
        query: t.Object({
          days: t.Optional(
            t.String({
              description:
                "integer look-back window in days, 1..90, default 30; non-numeric or over 90: 400 VALIDATION_ERROR",
            }),
          ),
          limit: t.Optional(
            t.String({
              description:
                "integer max posts, 1..100, default 50; non-numeric or over 100: 400 VALIDATION_ERROR",
            }),
          ),
          offset: t.Optional(
            t.String({
              description: "integer pagination offset, default 0; non-numeric: 400 VALIDATION_ERROR",
            }),
          ),
        }),
        response: { 200: t.Object({ posts: t.Array(PerformancePost) }), ...errors(400, 401, 403) },
        detail: detail(
          "Social performance report",
          "Posts published in the last `days`, newest first; each target with `first` (earliest snapshot) and `latest` (most recent), both null for a post published less than about an hour ago. A null metric means the platform does not expose it or the token cannot read it; `extra.unavailable` says which and why.",
        ),
      },
    );
}
