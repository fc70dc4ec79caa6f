import type { Clock } from "@site/config";
import {
  type AdapterAccount,
  type AdapterTarget,
  buildReading,
  type MetricsReading,
  type PlatformAdapter,
  type UnavailableReason,
} from "@site/domain/social";
import { callPlatform, endpoint, graphError, num, ok } from "./_http.ts";
import { insightValues, publishGraphContainer } from "./_graph.ts";

/** The Instagram Graph API's real address. */
export const INSTAGRAM_API_BASE = "https://graph.facebook.com/v21.0";
/** The permission that opens views, reach, saves and shares. */
export const INSTAGRAM_INSIGHTS_PERMISSION = "instagram_manage_insights";

/** Instagram (photo-sharing): Graph API media containers, `media_publish`, fields and `/insights`. */
export function instagramAdapter(clock: Clock, base = INSTAGRAM_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  return {
    platform: "instagram",
    async publish(account, text) {
      const user = encodeURIComponent(account.accountId);
      return publishGraphContainer({
        base,
        clock,
        headers: auth(account),
        container: endpoint(base, `/${user}/media`, { caption: text }),
        publish: (creationId) => endpoint(base, `/${user}/media_publish`, { creation_id: creationId }),
        fallbackUrl: (mediaId) => `https://www.instagram.com/p/${mediaId}/`,
      });
    },
    async readMetrics(account: AdapterAccount, target: AdapterTarget): Promise<MetricsReading> {
      const id = encodeURIComponent(target.platformPostId);
      const fields = await callPlatform(endpoint(base, `/${id}`, { fields: "like_count,comments_count" }), {
        headers: auth(account),
      });
      if (!ok(fields)) throw graphError(fields);
      const basic = fields.body as { like_count?: unknown; comments_count?: unknown };
      // views, reach, saves and shares come only from /insights, which needs the insights permission.
      let insights: Record<string, number> = {};
      let insightsReason: UnavailableReason | null = null;
      if (!account.permissions.includes(INSTAGRAM_INSIGHTS_PERMISSION)) insightsReason = "permission_missing";
      else {
        const answer = await callPlatform(
          endpoint(base, `/${id}/insights`, { metric: "views,reach,saved,shares" }),
          { headers: auth(account) },
        );
        if (ok(answer)) insights = insightValues(answer.body);
        else {
          const err = graphError(answer);
          if (err.kind === "rate_limited" || err.kind === "transient") throw err;
          insightsReason = err.kind === "permission" ? "permission_missing" : "platform_error";
        }
      }
      const why = insightsReason ?? "platform_error";
      const reading = buildReading(
        {
          views: insights.views,
          likes: num(basic.like_count),
          comments: num(basic.comments_count),
          shares: insights.shares,
          saves: insights.saved,
        },
        { views: why, shares: why, saves: why, likes: "platform_error", comments: "platform_error" },
        { reach: insights.reach ?? null },
      );
      if (insights.reach === undefined)
        reading.extra.unavailable = { ...(reading.extra.unavailable as object), reach: why };
      return reading;
    },
  };
}
