import {
  type AdapterAccount,
  type AdapterTarget,
  buildReading,
  type MetricsReading,
  type PlatformAdapter,
  PlatformError,
  type PublishMedia,
  platformMediaViolation,
  type UnavailableReason,
} from "@site/domain/social";
import {
  createContainer,
  findPublishedMedia,
  insightValues,
  publishContainer,
  waitForContainer,
} from "./_graph.ts";
import { callPlatform, endpoint, graphError, num, ok } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";
import { GRAPH_DEFAULT_VERSION, INSTAGRAM_API_HOST } from "./versions.ts";

/**
 * The Instagram API's real address for Instagram Login tokens: graph.instagram.com ("two Meta host URLs":
 * graph.instagram.com for Instagram Login, graph.facebook.com for Facebook Login,
 * https://developers.facebook.com/docs/instagram-platform/overview#instagram-api-with-instagram-login),
 * at the default Graph version; createPlatformAdapters builds it from the settings (graphBase).
 */
export const INSTAGRAM_API_BASE = `${INSTAGRAM_API_HOST}/${GRAPH_DEFAULT_VERSION}`;
/** The permission that opens views, reach, saves and shares. */
export const INSTAGRAM_INSIGHTS_PERMISSION = "instagram_manage_insights";

/**
 * Instagram (photo-sharing): Graph API media containers with `image_url` / `video_url` (a REELS
 * container for a video), a CAROUSEL container over item containers for 2–10 files, each waited on until
 * its `status_code` is FINISHED, then `media_publish`; metrics from fields and `/insights`.
 * https://developers.facebook.com/docs/instagram-platform/content-publishing/
 */
export function instagramAdapter(opts: AdapterOptions, base = INSTAGRAM_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  return {
    platform: "instagram",
    async publish(account, post) {
      const violation = platformMediaViolation("instagram", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const user = encodeURIComponent(account.accountId);
      const headers = auth(account);
      const create = (params: Record<string, string>) =>
        createContainer(endpoint(base, `/${user}/media`), headers, params);
      const wait = (id: string) =>
        waitForContainer({ base, headers, id, field: "status_code", poll: opts.poll, platform: "instagram" });
      const itemParams = (m: PublishMedia): Record<string, string> =>
        m.kind === "video" ? { media_type: "REELS", video_url: m.url } : { image_url: m.url };
      let creationId: string;
      if (post.media.length === 1) {
        creationId = await create({ ...itemParams(post.media[0]!), caption: post.text });
      } else {
        const children: string[] = [];
        for (const m of post.media) {
          const child = await create({
            is_carousel_item: "true",
            ...(m.kind === "video" ? { media_type: "VIDEO", video_url: m.url } : { image_url: m.url }),
          });
          await wait(child);
          children.push(child);
        }
        creationId = await create({
          media_type: "CAROUSEL",
          children: children.join(","),
          caption: post.text,
        });
      }
      await wait(creationId);
      return publishContainer({
        base,
        clock: opts.clock,
        headers,
        publishUrl: endpoint(base, `/${user}/media_publish`),
        creationId,
        fallbackUrl: (mediaId) => `https://www.instagram.com/p/${mediaId}/`,
      });
    },
    /**
     * A cut-off try's post (decision 1497): the user's media list, `GET /<user>/media?fields=id,caption,
     * permalink,timestamp` (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reading), the media since the try with exactly this caption.
     */
    async findPublished(account, post) {
      return findPublishedMedia({
        base,
        headers: auth(account),
        user: account.accountId,
        edge: "media",
        textField: "caption",
        text: post.text,
        since: post.since,
        clock: opts.clock,
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
