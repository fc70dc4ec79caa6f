import {
  type AdapterAccount,
  type PlatformAdapter,
  platformMediaViolation,
  PlatformError,
  unavailableReading,
} from "@site/domain/social";
import { type ApiAnswer, callPlatform, endpoint, ok, statusError } from "./_http.ts";
import { pollUntil } from "./_graph.ts";
import type { AdapterOptions } from "./options.ts";

/** TikTok's Content Posting API's real address. */
export const TIKTOK_API_BASE = "https://open.tiktokapis.com/v2";

/** TikTok answers `{data, error: {code, message, log_id}}`; `code` is "ok" on success. */
function tiktokError(a: ApiAnswer): PlatformError {
  const e = ((a.body ?? {}) as { error?: { code?: string; message?: string } }).error;
  const message = `${e?.code ?? `HTTP ${a.status}`}: ${e?.message ?? ""}`.trim();
  if (e?.code === "access_token_invalid") return new PlatformError("auth", message, { status: a.status });
  if (e?.code === "scope_not_authorized")
    return new PlatformError("permission", message, { status: a.status });
  if (e?.code === "rate_limit_exceeded") return statusError({ ...a, status: 429 }, message);
  return statusError(a, message);
}

/** TikTok's privacy levels from the most public down; the adapter takes the first the creator allows. */
export const TIKTOK_PRIVACY_PREFERENCE = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY",
] as const;

/**
 * TikTok (the further platform): the Content Posting API's direct post. It asks `creator_info/query`
 * for the privacy levels this creator allows and posts with the most public of them, pulls the media
 * from their share URLs (`PULL_FROM_URL`: photos through `content/init`, a video through `video/init`),
 * then polls `status/fetch` until the post is public and reads its real id. It offers no readable
 * metrics, so every snapshot reports null metrics (`not_exposed`) without calling it.
 * https://developers.tiktok.com/doc/content-posting-api-reference-photo-post
 * https://developers.tiktok.com/doc/content-posting-api-reference-direct-post
 * https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status
 */
export function tiktokAdapter(opts: AdapterOptions, base = TIKTOK_API_BASE): PlatformAdapter {
  const call = (account: AdapterAccount, path: string, body: unknown) =>
    callPlatform(endpoint(base, path), {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.accessToken}`,
        "content-type": "application/json; charset=UTF-8",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  type Answer<T> = { data?: T; error?: { code?: string; message?: string } };
  const data = <T>(a: ApiAnswer): T => {
    const b = (a.body ?? {}) as Answer<T>;
    if (!ok(a) || b.error?.code !== "ok" || !b.data) throw tiktokError(a);
    return b.data;
  };
  return {
    platform: "tiktok",
    async publish(account: AdapterAccount, post) {
      const violation = platformMediaViolation("tiktok", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const creator = data<{ privacy_level_options?: string[]; creator_username?: string }>(
        await call(account, "/post/publish/creator_info/query/", undefined),
      );
      const allowed = creator.privacy_level_options ?? [];
      const privacy = TIKTOK_PRIVACY_PREFERENCE.find((p) => allowed.includes(p));
      if (!privacy)
        throw new PlatformError(
          "rejected",
          `tiktok: the creator allows no known privacy level (${allowed.join(", ")})`,
        );
      const video = post.media[0]?.kind === "video";
      const init = video
        ? await call(account, "/post/publish/video/init/", {
            post_info: { title: post.text.slice(0, 2200), privacy_level: privacy },
            source_info: { source: "PULL_FROM_URL", video_url: post.media[0]!.url },
          })
        : await call(account, "/post/publish/content/init/", {
            post_info: {
              title: post.text.slice(0, 90),
              description: post.text.slice(0, 4000),
              privacy_level: privacy,
            },
            source_info: {
              source: "PULL_FROM_URL",
              photo_cover_index: 0,
              photo_images: post.media.map((m) => m.url),
            },
            post_mode: "DIRECT_POST",
            media_type: "PHOTO",
          });
      const publishId = data<{ publish_id?: string }>(init).publish_id;
      if (!publishId) throw new PlatformError("rejected", "tiktok: no publish_id in the answer");
      const username = creator.creator_username ?? account.displayName ?? account.accountId;
      const profile = `https://www.tiktok.com/@${encodeURIComponent(username)}`;
      // Public posts pass moderation before TikTok gives their id; a complete post still waiting for it
      // keeps its publish id (prefixed) and the profile's address (decision 1000).
      let completeWithoutId = false;
      const postId = await pollUntil(opts.poll, `tiktok publish ${publishId}`, async () => {
        const answer = await call(account, "/post/publish/status/fetch/", { publish_id: publishId });
        const s = data<{ status?: string; fail_reason?: string; publicaly_available_post_id?: unknown[] }>(
          answer,
        );
        if (s.status === "FAILED")
          throw new PlatformError(
            "rejected",
            `tiktok could not publish: ${s.fail_reason ?? "no reason given"}`,
          );
        // The ids are int64 JSON numbers: read the digits from the raw answer, not the (lossy) double.
        const exact = /"publicaly_available_post_id"\s*:\s*\[\s*"?(\d+)/.exec(answer.raw ?? "")?.[1];
        const id = exact ?? s.publicaly_available_post_id?.[0];
        if (s.status === "PUBLISH_COMPLETE" && id !== undefined) return String(id);
        completeWithoutId = s.status === "PUBLISH_COMPLETE";
        return null;
      }).catch((err) => {
        if (completeWithoutId) return null;
        throw err;
      });
      if (!postId)
        return { platformPostId: `publish:${publishId}`, url: profile, publishedAt: opts.clock.now() };
      return {
        platformPostId: postId,
        url: `${profile}/${video ? "video" : "photo"}/${postId}`,
        publishedAt: opts.clock.now(),
      };
    },
    async readMetrics() {
      return unavailableReading("not_exposed");
    },
  };
}
