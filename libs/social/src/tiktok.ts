import type { Clock } from "@site/config";
import {
  type AdapterAccount,
  type PlatformAdapter,
  PlatformError,
  unavailableReading,
} from "@site/domain/social";
import { type ApiAnswer, callPlatform, endpoint, ok, statusError } from "./_http.ts";

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

/**
 * TikTok (the further platform): publishes through the Content Posting API's direct post; it offers no
 * readable metrics, so every snapshot reports null metrics (`not_exposed`) without calling it.
 */
export function tiktokAdapter(clock: Clock, base = TIKTOK_API_BASE): PlatformAdapter {
  return {
    platform: "tiktok",
    async publish(account: AdapterAccount, text) {
      const a = await callPlatform(endpoint(base, "/post/publish/content/init/"), {
        method: "POST",
        headers: {
          authorization: `Bearer ${account.accessToken}`,
          "content-type": "application/json; charset=UTF-8",
        },
        body: JSON.stringify({
          post_info: { title: text.slice(0, 90), description: text, privacy_level: "PUBLIC_TO_EVERYONE" },
          source_info: { source: "PULL_FROM_URL", photo_images: [], photo_cover_index: 0 },
          post_mode: "DIRECT_POST",
          media_type: "PHOTO",
        }),
      });
      const body = (a.body ?? {}) as { data?: { publish_id?: string }; error?: { code?: string } };
      if (!ok(a) || body.error?.code !== "ok" || !body.data?.publish_id) throw tiktokError(a);
      return {
        platformPostId: body.data.publish_id,
        url: `https://www.tiktok.com/@${encodeURIComponent(account.displayName ?? account.accountId)}`,
        publishedAt: clock.now(),
      };
    },
    async readMetrics() {
      return unavailableReading("not_exposed");
    },
  };
}
