import { Type } from "@sinclair/typebox";
import { PerformanceQuery, PerformanceReport, socialPerformance } from "@site/domain/social";
import { type Tool, tool } from "./tool.ts";

/** The social performance report (spec "social performance"), as GET /api/v1/social/performance answers it. */
export const SOCIAL_PERFORMANCE_TOOLS: Tool[] = [
  tool({
    name: "get_social_performance",
    title: "Read the social performance report",
    description:
      "The organization's posts published in the last `days` (1–90, default 30), newest first, `limit` (1–100, default 50) from `offset`: each target (platform, accountId, url) with `first` (earliest metrics snapshot) and `latest` (most recent). Both are null for a post published less than about an hour ago: the first snapshot is taken then. A null metric means the platform does not expose it or the token cannot read it; `extra.unavailable` says which and why. One post's full series: get_social_post. Needs social:write.",
    operation: "getSocialPerformance",
    output: PerformanceReport,
    input: Type.Object({ ...PerformanceQuery.properties }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const report = await socialPerformance(deps, principal, args);
      const waiting = report.posts.some((p) => p.targets.some((t) => t.latest === null));
      return {
        value: report,
        note:
          report.posts.length === 0
            ? "No post was published in this window. Schedule one with create_social_post."
            : waiting
              ? "Targets without metrics yet were published less than about an hour ago: their first snapshot comes then. Read again later, or one post's series with get_social_post."
              : undefined,
      };
    },
  }),
];
