import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  type PublishMedia,
  platformMediaViolation,
} from "@site/domain/social";
import {
  createContainer,
  findPublishedMedia,
  insightValues,
  publishContainer,
  waitForContainer,
} from "./_graph.ts";
import { callPlatform, endpoint, graphError, ok } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";
import { THREADS_API_HOST, THREADS_DEFAULT_VERSION } from "./versions.ts";

/** The Threads API's real address. */
export const THREADS_API_BASE = `${THREADS_API_HOST}/${THREADS_DEFAULT_VERSION}`;
/** The permission every Threads metric needs. */
export const THREADS_INSIGHTS_PERMISSION = "threads_manage_insights";

/**
 * Threads (text-thread): a TEXT, IMAGE or VIDEO container (`image_url` / `video_url`), or a CAROUSEL over
 * 2–20 item containers, each waited on until its `status` is FINISHED, then `threads_publish`
 * (https://developers.facebook.com/docs/threads/posts); metrics from `/insights`. Replies map to
 * comments and reposts to shares; quotes and Threads' own `shares` (sends of the link) stay in `extra`
 * as `quotes` and `platformShares`.
 */
export function threadsAdapter(opts: AdapterOptions, base = THREADS_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  return {
    platform: "threads",
    async publish(account, post) {
      const violation = platformMediaViolation("threads", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const user = encodeURIComponent(account.accountId);
      const headers = auth(account);
      const create = (params: Record<string, string>) =>
        createContainer(endpoint(base, `/${user}/threads`), headers, params);
      const wait = (id: string) =>
        waitForContainer({ base, headers, id, field: "status", poll: opts.poll, platform: "threads" });
      const item = (m: PublishMedia): Record<string, string> =>
        m.kind === "video"
          ? { media_type: "VIDEO", video_url: m.url }
          : { media_type: "IMAGE", image_url: m.url };
      const text: Record<string, string> = post.text ? { text: post.text } : {};
      let creationId: string;
      if (post.media.length === 0) creationId = await create({ media_type: "TEXT", text: post.text });
      else if (post.media.length === 1) creationId = await create({ ...item(post.media[0]!), ...text });
      else {
        const children: string[] = [];
        for (const m of post.media) {
          const child = await create({ is_carousel_item: "true", ...item(m) });
          await wait(child);
          children.push(child);
        }
        creationId = await create({ media_type: "CAROUSEL", children: children.join(","), ...text });
      }
      await wait(creationId);
      return publishContainer({
        base,
        clock: opts.clock,
        headers,
        publishUrl: endpoint(base, `/${user}/threads_publish`),
        creationId,
        fallbackUrl: (mediaId) => `https://www.threads.net/post/${mediaId}`,
      });
    },
    /**
     * A cut-off try's post (decision 1497): the user's media list, `GET /<user>/threads?fields=id,text,
     * permalink,timestamp` (https://developers.facebook.com/docs/threads/retrieve-and-discover-posts/retrieve-posts), the media since the try with exactly this text.
     */
    async findPublished(account, post) {
      return findPublishedMedia({
        base,
        headers: auth(account),
        user: account.accountId,
        edge: "threads",
        textField: "text",
        text: post.text,
        since: post.since,
        clock: opts.clock,
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
