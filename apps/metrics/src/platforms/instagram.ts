import {
  type AdapterAccount,
  type AdapterTarget,
  buildReading,
  type MetricsReading,
  type PlatformAdapter,
  type UnavailableReason,
} from "@site/domain";
import { callPlatform, endpoint, graphError, num, ok } from "./_http.ts";

/** The Instagram Graph API's real address. */
export const INSTAGRAM_API_BASE = "https://graph.facebook.com/v21.0";
/** The permission that opens views, reach, saves and shares. */
export const INSTAGRAM_INSIGHTS_PERMISSION = "instagram_manage_insights";

type Insights = {
  data?: { name?: string; values?: { value?: unknown }[]; total_value?: { value?: unknown } }[];
};

/** Reads the Graph API's insight list into name → value. */
export function insightValues(body: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of (body as Insights | null)?.data ?? []) {
    const v = num(m.total_value?.value) ?? num(m.values?.[0]?.value);
    if (m.name && v !== undefined) out[m.name] = v;
  }
  return out;
}

/** Graph API timestamps carry `+0000`; make them ISO 8601. */
export function graphTime(value: unknown): Date {
  const d = typeof value === "string" ? new Date(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")) : null;
  return d && !Number.isNaN(d.getTime()) ? d : new Date();
}

/** Instagram (photo-sharing): Graph API media containers, `media_publish`, fields and `/insights`. */
export function instagramAdapter(base = INSTAGRAM_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  return {
    platform: "instagram",
    async publish(account, text) {
      const container = await callPlatform(
        endpoint(base, `/${encodeURIComponent(account.accountId)}/media`, { caption: text }),
        { method: "POST", headers: auth(account) },
      );
      const creationId = (container.body as { id?: string } | null)?.id;
      if (!ok(container) || !creationId) throw graphError(container);
      const published = await callPlatform(
        endpoint(base, `/${encodeURIComponent(account.accountId)}/media_publish`, {
          creation_id: creationId,
        }),
        { method: "POST", headers: auth(account) },
      );
      const mediaId = (published.body as { id?: string } | null)?.id;
      if (!ok(published) || !mediaId) throw graphError(published);
      const media = await callPlatform(
        endpoint(base, `/${encodeURIComponent(mediaId)}`, { fields: "id,permalink,timestamp" }),
        { headers: auth(account) },
      );
      const m = (ok(media) ? media.body : null) as { permalink?: string; timestamp?: string } | null;
      return {
        platformPostId: mediaId,
        url: m?.permalink ?? `https://www.instagram.com/p/${mediaId}/`,
        publishedAt: graphTime(m?.timestamp),
      };
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
