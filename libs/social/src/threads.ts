import type { Clock } from "@site/config";
import { type AdapterAccount, buildReading, type PlatformAdapter } from "@site/domain/social";
import { callPlatform, endpoint, graphError, ok } from "./_http.ts";
import { insightValues, publishGraphContainer } from "./_graph.ts";

/** The Threads API's real address. */
export const THREADS_API_BASE = "https://graph.threads.net/v1.0";
/** The permission every Threads metric needs. */
export const THREADS_INSIGHTS_PERMISSION = "threads_manage_insights";

/**
 * Threads (text-thread): a TEXT container then `threads_publish`; metrics from `/insights`. Replies map
 * to comments and reposts to shares; quotes and Threads' own `shares` (sends of the link) stay
 * in `extra` as `quotes` and `platformShares`.
 */
export function threadsAdapter(clock: Clock, base = THREADS_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  return {
    platform: "threads",
    async publish(account, text) {
      const user = encodeURIComponent(account.accountId);
      return publishGraphContainer({
        base,
        clock,
        headers: auth(account),
        container: endpoint(base, `/${user}/threads`, { media_type: "TEXT", text }),
        publish: (creationId) => endpoint(base, `/${user}/threads_publish`, { creation_id: creationId }),
        fallbackUrl: (mediaId) => `https://www.threads.net/post/${mediaId}`,
      });
    },
    async readMetrics(account, target) {
      const extraUnavailable = (why: string) => ({ quotes: why, platformShares: why });
      if (!account.permissions.includes(THREADS_INSIGHTS_PERMISSION)) {
        const r = buildReading(
          {},
          {
            views: "permission_missing",
            likes: "permission_missing",
            comments: "permission_missing",
            shares: "permission_missing",
          },
          { quotes: null, platformShares: null },
        );
        r.extra.unavailable = {
          ...(r.extra.unavailable as object),
          ...extraUnavailable("permission_missing"),
        };
        return r;
      }
      const answer = await callPlatform(
        endpoint(base, `/${encodeURIComponent(target.platformPostId)}/insights`, {
          metric: "views,likes,replies,reposts,quotes,shares",
        }),
        { headers: auth(account) },
      );
      if (!ok(answer)) throw graphError(answer);
      const v = insightValues(answer.body);
      const reading = buildReading(
        { views: v.views, likes: v.likes, comments: v.replies, shares: v.reposts },
        {
          views: "platform_error",
          likes: "platform_error",
          comments: "platform_error",
          shares: "platform_error",
        },
        { quotes: v.quotes ?? null, platformShares: v.shares ?? null },
      );
      const missing = Object.fromEntries(
        (
          [
            ["quotes", "quotes"],
            ["platformShares", "shares"],
          ] as const
        )
          .filter(([, name]) => v[name] === undefined)
          .map(([key]) => [key, "platform_error"]),
      );
      if (Object.keys(missing).length > 0)
        reading.extra.unavailable = { ...(reading.extra.unavailable as object), ...missing };
      return reading;
    },
  };
}
