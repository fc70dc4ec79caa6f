import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  parseRetryAfter,
  platformMediaViolation,
  unavailableReading,
} from "@site/domain/social";
import { pollUntil } from "./_graph.ts";
import { type ApiAnswer, callPlatform, endpoint, exactId, num, ok, statusError } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";

/** TikTok's Content Posting API's real address. */
export const TIKTOK_API_BASE = "https://open.tiktokapis.com/v2";

/** The window of TikTok's per-minute rate limits. */
const TIKTOK_RATE_WINDOW_MS = 60_000;

/** Why an unaudited app's TikTok post has no public address. */
export const TIKTOK_PRIVATE_NOTE =
  "posted SELF_ONLY (private): an app TikTok has not audited may post privately only, and a private post gets no public id or URL";

/** TikTok answers `{data, error: {code, message, log_id}}`; `code` is "ok" on success. */
function tiktokError(a: ApiAnswer): PlatformError {
  const e = ((a.body ?? {}) as { error?: { code?: string; message?: string } }).error;
  const message = `${e?.code ?? `HTTP ${a.status}`}: ${e?.message ?? ""}`.trim();
  if (e?.code === "access_token_invalid") return new PlatformError("auth", message, { status: a.status });
  if (e?.code === "scope_not_authorized")
    return new PlatformError("permission", message, { status: a.status });
  // Over the limit of TikTok's 1-minute sliding window: 429 `rate_limit_exceeded`; no Retry-After is
  // documented, so one window is waited unless one is sent
  // (https://developers.tiktok.com/doc/tiktok-api-v2-rate-limit).
  if (e?.code === "rate_limit_exceeded")
    return statusError(
      { ...a, status: 429 },
      message,
      parseRetryAfter(a.headers.get("retry-after")) ?? TIKTOK_RATE_WINDOW_MS,
    );
  return statusError(a, message);
}

/** What the status poll answers for a private post complete without a public id. */
const PRIVATE = "";

/** Up to MAX_SINGLE a video is uploaded whole; above, in chunks of CHUNK (5–64 MB, media transfer guide). */
const MAX_SINGLE = 64 * 1024 * 1024;
const CHUNK = 10 * 1024 * 1024;

/**
 * The FILE_UPLOAD plan of a video: one chunk up to 64 MB, else 10 MB chunks whose last one takes the
 * rest, `total_chunk_count = floor(video_size / chunk_size)`
 * (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#file_upload).
 */
export function tiktokChunks(size: number): { chunkSize: number; count: number } {
  if (size <= MAX_SINGLE) return { chunkSize: size, count: 1 };
  return { chunkSize: CHUNK, count: Math.floor(size / CHUNK) };
}

/**
 * TikTok (the further platform): the Content Posting API's direct post
 * (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post,
 * https://developers.tiktok.com/doc/content-posting-api-reference-photo-post).
 * - The privacy level is the user's choice (`post.tiktok.privacyLevel`, one of creator_info/query's
 *   options, no default), as TikTok's UX guidelines require
 *   (https://developers.tiktok.com/doc/content-sharing-guidelines#step_2_metadata); an unaudited app may
 *   post SELF_ONLY only ("all content posted by unaudited clients will be restricted to private viewing
 *   mode", https://developers.tiktok.com/doc/content-posting-api-get-started#step_3), so without a
 *   choice it posts SELF_ONLY (decision 1031).
 * - A video under a URL prefix verified with TikTok (SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES) is pulled
 *   (PULL_FROM_URL); any other is uploaded (FILE_UPLOAD, PUT of the bytes with Content-Range). Photos
 *   can only be pulled, so they need a verified prefix.
 * - `status/fetch` is polled until the post is public and its real id is read (int64, read exactly).
 * - Metrics: by default none (the spec's "further platform": targets report null metrics, `not_exposed`,
 *   no call). With SOCIAL_TIKTOK_READ_METRICS (decision 1032) they come from `POST /v2/video/query/`
 *   (scope video.list, https://developers.tiktok.com/doc/tiktok-api-v2-video-query): view_count → views,
 *   like_count → likes, comment_count → comments, share_count → shares; saves are not exposed.
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
  const verified = (url: string) => opts.tiktokVerifiedUrlPrefixes.some((p) => url.startsWith(p));
  return {
    platform: "tiktok",
    async publish(account: AdapterAccount, post) {
      const violation = platformMediaViolation("tiktok", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      // An unaudited app has nothing to choose: TikTok restricts its posts to SELF_ONLY (decision 1031).
      const privacy = post.tiktok?.privacyLevel ?? (opts.tiktokAudited ? null : "SELF_ONLY");
      if (!privacy)
        throw new PlatformError(
          "rejected",
          "tiktok: the privacy level must be chosen by the user (platformOptions.tiktok.privacyLevel)",
        );
      if (!opts.tiktokAudited && privacy !== "SELF_ONLY")
        throw new PlatformError(
          "rejected",
          `tiktok: an app TikTok has not audited may post SELF_ONLY only, not ${privacy} (SOCIAL_TIKTOK_AUDITED)`,
        );
      const video = post.media[0]?.kind === "video";
      if (!video && post.media.some((m) => !verified(m.url)))
        throw new PlatformError(
          "rejected",
          "tiktok: photos are pulled from URLs only, and their prefix must be verified with TikTok (SOCIAL_TIKTOK_VERIFIED_URL_PREFIXES)",
        );
      const creator = data<{ privacy_level_options?: string[]; creator_username?: string }>(
        await call(account, "/post/publish/creator_info/query/", undefined),
      );
      const allowed = creator.privacy_level_options ?? [];
      if (!allowed.includes(privacy))
        throw new PlatformError(
          "rejected",
          `tiktok: the creator does not allow the privacy level ${privacy} (allowed: ${allowed.join(", ") || "none"})`,
        );
      let init: ApiAnswer;
      let upload: { bytes: Uint8Array; chunkSize: number; count: number } | null = null;
      if (video) {
        const m = post.media[0]!;
        let source: Record<string, unknown>;
        if (verified(m.url)) source = { source: "PULL_FROM_URL", video_url: m.url };
        else {
          const bytes = await m.read();
          const plan = tiktokChunks(bytes.byteLength);
          upload = { bytes, ...plan };
          source = {
            source: "FILE_UPLOAD",
            video_size: bytes.byteLength,
            chunk_size: plan.chunkSize,
            total_chunk_count: plan.count,
          };
        }
        init = await call(account, "/post/publish/video/init/", {
          post_info: { title: post.text.slice(0, 2200), privacy_level: privacy },
          source_info: source,
        });
      } else
        init = await call(account, "/post/publish/content/init/", {
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
      const started = data<{ publish_id?: string; upload_url?: string }>(init);
      const publishId = started.publish_id;
      if (!publishId) throw new PlatformError("rejected", "tiktok: no publish_id in the answer");
      // From here TikTok may post it: the publish id is kept on the target (a cut-off try is looked up by it).
      await post.onPublishRef?.(`publish:${publishId}:${video ? "video" : "photo"}`);
      if (upload) {
        if (!started.upload_url) throw new PlatformError("rejected", "tiktok: no upload_url in the answer");
        const total = upload.bytes.byteLength;
        for (let i = 0; i < upload.count; i++) {
          const first = i * upload.chunkSize;
          const last = i === upload.count - 1 ? total - 1 : first + upload.chunkSize - 1;
          const put = await callPlatform(started.upload_url, {
            method: "PUT",
            headers: {
              "content-type": "video/mp4",
              "content-range": `bytes ${first}-${last}/${total}`,
            },
            body: upload.bytes.slice(first, last + 1) as Uint8Array<ArrayBuffer>,
          });
          if (!ok(put)) throw tiktokError(put);
        }
      }
      const username = creator.creator_username ?? account.displayName ?? account.accountId;
      const profile = `https://www.tiktok.com/@${encodeURIComponent(username)}`;
      // Public posts pass moderation before TikTok gives their id; a complete post still waiting for it
      // keeps its publish id (prefixed) and the profile's address (decision 1000).
      let completeWithoutId = false;
      // A private (SELF_ONLY) post never gets a public id: TikTok gives one only after the moderation of
      // posts "created for public viewership"
      // (https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status). It is
      // published once PUBLISH_COMPLETE, without a public URL, saying why.
      const isPrivate = privacy === "SELF_ONLY";
      const postId = await pollUntil(opts.poll, `tiktok publish ${publishId}`, async () => {
        const answer = await call(account, "/post/publish/status/fetch/", { publish_id: publishId });
        const s = data<{ status?: string; fail_reason?: string }>(answer);
        if (s.status === "FAILED")
          throw new PlatformError(
            "rejected",
            `tiktok could not publish: ${s.fail_reason ?? "no reason given"}`,
          );
        // The ids are int64 JSON numbers: read the digits from the raw answer, not the (lossy) double.
        const id = exactId(answer.raw, "publicaly_available_post_id");
        if (s.status === "PUBLISH_COMPLETE" && id !== null) return id;
        completeWithoutId = s.status === "PUBLISH_COMPLETE";
        if (completeWithoutId && isPrivate) return PRIVATE;
        return null;
      }).catch((err) => {
        if (completeWithoutId) return null;
        throw err;
      });
      if (postId === PRIVATE)
        return {
          platformPostId: `publish:${publishId}`,
          url: null,
          publishedAt: opts.clock.now(),
          note: `tiktok: ${TIKTOK_PRIVATE_NOTE}`,
        };
      if (!postId)
        return { platformPostId: `publish:${publishId}`, url: profile, publishedAt: opts.clock.now() };
      return {
        platformPostId: postId,
        url: `${profile}/${video ? "video" : "photo"}/${postId}`,
        publishedAt: opts.clock.now(),
      };
    },
    /**
     * A cut-off try (decision 1497): its publish id (kept on the target once init answered) asked of
     * `POST /v2/post/publish/status/fetch/`
     * (https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status).
     * PUBLISH_COMPLETE: published (its public id and URL once TikTok gives them; a private post without,
     * saying why); FAILED: nothing was posted (null, tried again); still processing: looked up again
     * later (transient). A try cut off before init answered has no publish id, and TikTok lists no
     * private posts (the Display API's video list is of public videos only): not looked up, failed safely.
     */
    async findPublished(account, post) {
      // The try's reference: publish:<publish_id>:<video|photo> (publish above).
      const [prefix, publishId, kind] = (post.ref ?? "").split(":");
      if (prefix !== "publish" || !publishId)
        throw new PlatformError(
          "rejected",
          "tiktok: the try was cut off before TikTok answered its publish_id, and TikTok lists no private posts to look it up",
        );
      const answer = await call(account, "/post/publish/status/fetch/", { publish_id: publishId });
      const s = data<{ status?: string; fail_reason?: string }>(answer);
      if (s.status === "FAILED") return null;
      if (s.status !== "PUBLISH_COMPLETE")
        throw new PlatformError(
          "transient",
          `tiktok: publish ${publishId} is still ${s.status ?? "processing"}`,
        );
      const id = exactId(answer.raw, "publicaly_available_post_id");
      // Complete without a public id: private, or public and not moderated yet (decision 1000).
      if (id === null)
        return {
          platformPostId: `publish:${publishId}`,
          url: null,
          publishedAt: opts.clock.now(),
          note: "tiktok: published; TikTok gives a public id only to a public post once moderated (none for a private post)",
        };
      const creator = data<{ creator_username?: string }>(
        await call(account, "/post/publish/creator_info/query/", undefined),
      );
      const username = creator.creator_username ?? account.displayName ?? account.accountId;
      return {
        platformPostId: id,
        url: `https://www.tiktok.com/@${encodeURIComponent(username)}/${kind === "photo" ? "photo" : "video"}/${id}`,
        publishedAt: opts.clock.now(),
      };
    },
    async creatorInfo(account) {
      // https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info
      const c = data<{
        creator_username?: string;
        creator_nickname?: string;
        privacy_level_options?: string[];
        comment_disabled?: boolean;
        duet_disabled?: boolean;
        stitch_disabled?: boolean;
        max_video_post_duration_sec?: number;
      }>(await call(account, "/post/publish/creator_info/query/", undefined));
      return {
        creatorUsername: c.creator_username ?? null,
        creatorNickname: c.creator_nickname ?? null,
        privacyLevelOptions: c.privacy_level_options ?? [],
        commentDisabled: c.comment_disabled === true,
        duetDisabled: c.duet_disabled === true,
        stitchDisabled: c.stitch_disabled === true,
        maxVideoPostDurationSec: num(c.max_video_post_duration_sec) ?? null,
      };
    },
    async readMetrics(account, target) {
      // The spec's further platform has no readable metrics unless the operator opted in (decision 1032).
      if (!opts.tiktokReadMetrics) return unavailableReading("not_exposed");
      if (!account.permissions.includes("video.list")) return unavailableReading("permission_missing");
      // A post TikTok has not given an id yet cannot be asked for.
      if (target.platformPostId.startsWith("publish:")) return unavailableReading("platform_error");
      const a = await callPlatform(
        endpoint(base, "/video/query/", { fields: "id,view_count,like_count,comment_count,share_count" }),
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${account.accessToken}`,
            "content-type": "application/json; charset=UTF-8",
          },
          body: JSON.stringify({ filters: { video_ids: [target.platformPostId] } }),
        },
      );
      const d = data<{ videos?: Record<string, unknown>[] }>(a);
      const v = d.videos?.find((x) => String(x.id) === target.platformPostId) ?? d.videos?.[0];
      if (!v) return unavailableReading("platform_error", { error: "tiktok: the video was not found" });
      return buildReading(
        {
          views: num(v.view_count),
          likes: num(v.like_count),
          comments: num(v.comment_count),
          shares: num(v.share_count),
        },
        {
          views: "platform_error",
          likes: "platform_error",
          comments: "platform_error",
          shares: "platform_error",
        },
      );
    },
  };
}
