import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  type PublishMedia,
  platformMediaViolation,
  unavailableReading,
} from "@site/domain/social";
import { pollUntil } from "./_graph.ts";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";
import type { AdapterOptions } from "./options.ts";

/**
 * The bytes of one appended segment of a chunked upload. A segment is at most 5 MB
 * (https://docs.x.com/x-api/media/append-media-upload) and is sent base64 in JSON, which grows it by 4/3:
 * 3 MiB of file is 4 MiB (4,194,304 bytes) of base64, safely under 5,000,000.
 */
export const X_CHUNK_BYTES = 3 * 1024 * 1024;

/** The X API v2's real address. */
export const X_API_BASE = "https://api.x.com/2";

type Problem = { title?: string; detail?: string; type?: string; reason?: string };

/** An epoch-seconds header as a time, or null when absent or not a positive number. */
function epochHeader(a: ApiAnswer, name: string): Date | null {
  const v = Number(a.headers.get(name));
  return Number.isFinite(v) && v > 0 ? new Date(v * 1000) : null;
}

/**
 * X API v2 errors: 429 is rate-limited until `x-rate-limit-reset` (epoch seconds, the 15-minute
 * window's end), or, when a 24-hour cap is spent (`x-user-limit-24hour-remaining` or
 * `x-app-limit-24hour-remaining` 0), until that cap's `…-24hour-reset`
 * (https://docs.x.com/x-api/fundamentals/rate-limits); 403 client-forbidden on the free tier.
 */
function xError(a: ApiAnswer): PlatformError {
  const p = (a.body ?? {}) as Problem;
  const message = `${p.title ?? `HTTP ${a.status}`}: ${p.detail ?? ""}`.trim();
  if (a.status === 429) {
    const spent = ["user", "app"].flatMap((who) =>
      a.headers.get(`x-${who}-limit-24hour-remaining`) === "0"
        ? [epochHeader(a, `x-${who}-limit-24hour-reset`)]
        : [],
    );
    const daily = spent.filter((d): d is Date => d !== null).sort((x, y) => y.getTime() - x.getTime())[0];
    const at = daily ?? epochHeader(a, "x-rate-limit-reset");
    // The moment is the platform's; the wait is measured against the wall clock it is stated on.
    const retry = at ? Math.max(0, at.getTime() - Date.now()) : null;
    return statusError(a, daily ? `${message} (24-hour limit)` : message, retry, at);
  }
  return statusError(a, message);
}

function isTierProblem(a: ApiAnswer): boolean {
  const p = (a.body ?? {}) as Problem;
  return (
    a.status === 403 &&
    (p.reason === "client-not-enrolled" ||
      (p.type ?? "").includes("client-forbidden") ||
      /tier|access level|subset/i.test(p.detail ?? ""))
  );
}

/**
 * X (microblogging): `POST /2/tweets`, metrics from `GET /2/tweets/:id?tweet.fields=public_metrics`.
 * Impressions map to views, replies to comments, retweets to shares, bookmarks to saves; quotes stay in
 * `extra`. On the free tier reading fails for every metric, so all are null with `paid_tier_required`.
 */
export function xAdapter(opts: AdapterOptions, base = X_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  const postJson = (account: AdapterAccount, path: string, body?: unknown) =>
    callPlatform(endpoint(base, path), {
      method: "POST",
      headers: { ...auth(account), "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  type Media = {
    data?: {
      id?: string;
      processing_info?: { state?: string; check_after_secs?: number; error?: { message?: string } };
    };
  };
  /** Uploads one file, returning its media id: an image in one call, a video in chunks then processed. */
  async function upload(account: AdapterAccount, m: PublishMedia): Promise<string> {
    const bytes = await m.read();
    // The one-shot upload's media_type has no image/gif (https://docs.x.com/x-api/media/upload-media,
    // the XDK's MediaUploadRequestOneShot): a GIF goes through the chunked flow as `tweet_gif`
    // (https://docs.x.com/x-api/media/initialize-media-upload, media_category).
    const gif = m.contentType === "image/gif";
    if (m.kind === "image" && !gif) {
      // https://docs.x.com/x-api/media/upload-media : base64 `media` in a JSON body, `media_category`.
      const a = await postJson(account, "/media/upload", {
        media: Buffer.from(bytes).toString("base64"),
        media_category: "tweet_image",
        media_type: m.contentType,
      });
      const id = (a.body as Media | null)?.data?.id;
      if (!ok(a) || !id) throw xError(a);
      return id;
    }
    // https://docs.x.com/x-api/media/initialize-media-upload , …/append-media-upload , …/finalize-media-upload
    const init = await postJson(account, "/media/upload/initialize", {
      media_type: m.contentType,
      total_bytes: bytes.byteLength,
      media_category: gif ? "tweet_gif" : "tweet_video",
    });
    const id = (init.body as Media | null)?.data?.id;
    if (!ok(init) || !id) throw xError(init);
    for (let at = 0, segment = 0; at < bytes.byteLength; at += X_CHUNK_BYTES, segment++) {
      const a = await postJson(account, `/media/upload/${id}/append`, {
        media: Buffer.from(bytes.subarray(at, at + X_CHUNK_BYTES)).toString("base64"),
        segment_index: segment,
      });
      if (!ok(a)) throw xError(a);
    }
    const fin = await postJson(account, `/media/upload/${id}/finalize`);
    if (!ok(fin)) throw xError(fin);
    let info = (fin.body as Media | null)?.data?.processing_info;
    // https://docs.x.com/x-api/media/get-media-upload-status : poll until `succeeded` or `failed`, each
    // check after the `check_after_secs` the last answer stated (the configured interval when none).
    const statedWait = () => {
      const secs = num(info?.check_after_secs);
      return secs !== undefined && secs > 0 ? secs * 1000 : null;
    };
    if (info && info.state !== "succeeded" && info.state !== "failed") {
      const first = statedWait();
      if (first) await Bun.sleep(first);
    }
    await pollUntil(
      opts.poll,
      `x ${gif ? "gif" : "video"} ${id}`,
      async () => {
        if (!info || info.state === "succeeded") return true;
        if (info.state === "failed")
          throw new PlatformError(
            "rejected",
            `x could not process the video: ${info.error?.message ?? "failed"}`,
          );
        const a = await callPlatform(endpoint(base, "/media/upload", { command: "STATUS", media_id: id }), {
          headers: auth(account),
        });
        if (!ok(a)) throw xError(a);
        info = (a.body as Media | null)?.data?.processing_info;
        if (info?.state === "failed")
          throw new PlatformError(
            "rejected",
            `x could not process the video: ${info.error?.message ?? "failed"}`,
          );
        return info && info.state !== "succeeded" ? null : true;
      },
      statedWait,
    );
    return id;
  }
  const noTier = () => {
    const r = unavailableReading("paid_tier_required", { quotes: null });
    r.extra.unavailable = { ...(r.extra.unavailable as object), quotes: "paid_tier_required" };
    return r;
  };
  return {
    platform: "x",
    async publish(account, post) {
      const violation = platformMediaViolation("x", post.media);
      if (violation) throw new PlatformError("rejected", violation);
      const mediaIds: string[] = [];
      for (const m of post.media) mediaIds.push(await upload(account, m));
      const body: Record<string, unknown> = {};
      if (post.text) body.text = post.text;
      if (mediaIds.length > 0) body.media = { media_ids: mediaIds };
      const a = await callPlatform(endpoint(base, "/tweets"), {
        method: "POST",
        headers: { ...auth(account), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const id = (a.body as { data?: { id?: string } } | null)?.data?.id;
      if (!ok(a) || !id) throw xError(a);
      return { platformPostId: id, url: `https://x.com/i/web/status/${id}`, publishedAt: opts.clock.now() };
    },
    /**
     * The account's posts since `since` (https://docs.x.com/x-api/users/get-posts : GET
     * /2/users/:id/tweets, `start_time` RFC 3339, `max_results` 5–100, newest first): the one whose text
     * is the post's, if any (decision 1471).
     */
    async findPublished(account, post) {
      const a = await callPlatform(
        endpoint(base, `/users/${encodeURIComponent(account.accountId)}/tweets`, {
          start_time: post.since.toISOString().replace(/\.\d{3}Z$/, "Z"),
          max_results: "100",
          "tweet.fields": "created_at",
        }),
        { headers: auth(account) },
      );
      if (!ok(a)) throw xError(a);
      const data =
        (a.body as { data?: { id?: string; text?: string; created_at?: string }[] } | null)?.data ?? [];
      const hit = data.find((d) => d.id && d.text === post.text);
      if (!hit?.id) return null;
      const at = hit.created_at ? new Date(hit.created_at) : opts.clock.now();
      return { platformPostId: hit.id, url: `https://x.com/i/web/status/${hit.id}`, publishedAt: at };
    },
    async readMetrics(account, target) {
      if ((account.tier ?? "free") === "free") return noTier();
      const a = await callPlatform(
        endpoint(base, `/tweets/${encodeURIComponent(target.platformPostId)}`, {
          "tweet.fields": "public_metrics",
        }),
        { headers: auth(account) },
      );
      if (isTierProblem(a)) return noTier();
      if (!ok(a)) throw xError(a);
      const body = a.body as { data?: { public_metrics?: Record<string, unknown> }; errors?: Problem[] };
      if (!body.data)
        throw new PlatformError("rejected", body.errors?.[0]?.detail ?? "tweet not found", {
          status: a.status,
        });
      const m = body.data.public_metrics ?? {};
      const reading = buildReading(
        {
          views: num(m.impression_count),
          likes: num(m.like_count),
          comments: num(m.reply_count),
          shares: num(m.retweet_count),
          saves: num(m.bookmark_count),
        },
        {},
        { quotes: num(m.quote_count) ?? null },
      );
      if (num(m.quote_count) === undefined)
        reading.extra.unavailable = { ...(reading.extra.unavailable as object), quotes: "not_exposed" };
      return reading;
    },
  };
}
