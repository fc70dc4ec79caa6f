import type { Clock } from "@site/config";
import {
  type AdapterAccount,
  buildReading,
  type PlatformAdapter,
  PlatformError,
  unavailableReading,
} from "@site/domain/social";
import { type ApiAnswer, callPlatform, endpoint, num, ok, statusError } from "./_http.ts";

/** The X API v2's real address. */
export const X_API_BASE = "https://api.x.com/2";

type Problem = { title?: string; detail?: string; type?: string; reason?: string };

/** X API v2 errors: 429 with `x-rate-limit-reset` (epoch seconds); 403 client-forbidden on the free tier. */
function xError(a: ApiAnswer): PlatformError {
  const p = (a.body ?? {}) as Problem;
  const message = `${p.title ?? `HTTP ${a.status}`}: ${p.detail ?? ""}`.trim();
  if (a.status === 429) {
    const reset = Number(a.headers.get("x-rate-limit-reset"));
    // A wait slept in real time against the platform's wall clock, not the (possibly fixed) domain clock.
    const retry = Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : null;
    return statusError(a, message, retry);
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
export function xAdapter(clock: Clock, base = X_API_BASE): PlatformAdapter {
  const auth = (a: AdapterAccount) => ({ authorization: `Bearer ${a.accessToken}` });
  const noTier = () => {
    const r = unavailableReading("paid_tier_required", { quotes: null });
    r.extra.unavailable = { ...(r.extra.unavailable as object), quotes: "paid_tier_required" };
    return r;
  };
  return {
    platform: "x",
    async publish(account, text) {
      const a = await callPlatform(endpoint(base, "/tweets"), {
        method: "POST",
        headers: { ...auth(account), "content-type": "application/json" },
        body: JSON.stringify({ text }),
      });
      const id = (a.body as { data?: { id?: string } } | null)?.data?.id;
      if (!ok(a) || !id) throw xError(a);
      return { platformPostId: id, url: `https://x.com/i/web/status/${id}`, publishedAt: clock.now() };
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
