import type { Clock } from "@site/config";
import { PlatformError, type PublishResult } from "@site/domain/social";
import { callPlatform, endpoint, graphError, num, ok } from "./_http.ts";

// Shared by the Meta Graph platforms (Instagram, Threads): insights lists, timestamps and the
// container → wait until FINISHED → publish → permalink flow.

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

/** Graph API timestamps carry `+0000`; make them ISO 8601. Null when there is none to read. */
export function graphTime(value: unknown): Date | null {
  const d = typeof value === "string" ? new Date(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")) : null;
  return d && !Number.isNaN(d.getTime()) ? d : null;
}

/** How long to wait for a container (or any platform-side processing) to be ready. */
export type PollOptions = { intervalMs: number; maxAttempts: number };

/** The default wait: a check every 3 s, 60 checks (3 minutes), as Meta's docs suggest for video. */
export const DEFAULT_POLL: PollOptions = { intervalMs: 3000, maxAttempts: 60 };

/**
 * Polls `check` until it says done (returns a value) or failed (throws); the first check runs at once,
 * then one every `intervalMs` (or, when `statedWaitMs` gives one, after the wait the platform stated in
 * its last answer, such as X's `check_after_secs`), at most `maxAttempts` in all, after which `what`
 * failed as not ready.
 */
export async function pollUntil<T>(
  poll: PollOptions,
  what: string,
  check: () => Promise<T | null>,
  statedWaitMs?: () => number | null,
): Promise<T> {
  for (let attempt = 1; attempt <= poll.maxAttempts; attempt++) {
    const done = await check();
    if (done !== null) return done;
    if (attempt < poll.maxAttempts) await Bun.sleep(statedWaitMs?.() ?? poll.intervalMs);
  }
  throw new PlatformError(
    "rejected",
    `${what} was still not ready after ${poll.maxAttempts} checks ${Math.round(poll.intervalMs / 1000)} s apart`,
  );
}

/** Creates one Graph container (POST with the parameters in the query, as the references show). */
export async function createContainer(
  url: string,
  headers: Record<string, string>,
  params: Record<string, string>,
): Promise<string> {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  const a = await callPlatform(u.toString(), { method: "POST", headers });
  const id = (a.body as { id?: string } | null)?.id;
  if (!ok(a) || !id) throw graphError(a);
  return id;
}

/**
 * Waits until a container is FINISHED. Instagram reports `status_code` (EXPIRED, ERROR, FINISHED,
 * IN_PROGRESS, PUBLISHED: https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container),
 * Threads `status` with `error_message` (https://developers.facebook.com/docs/threads/troubleshooting#publishing-does-not-return-a-media-id).
 */
export async function waitForContainer(opts: {
  base: string;
  headers: Record<string, string>;
  id: string;
  field: "status_code" | "status";
  poll: PollOptions;
  platform: string;
}): Promise<void> {
  const fields = opts.field === "status_code" ? "status_code,status" : "status,error_message";
  await pollUntil(opts.poll, `${opts.platform} container ${opts.id}`, async () => {
    const a = await callPlatform(endpoint(opts.base, `/${encodeURIComponent(opts.id)}`, { fields }), {
      headers: opts.headers,
    });
    if (!ok(a)) throw graphError(a);
    const b = (a.body ?? {}) as { status_code?: string; status?: string; error_message?: string };
    const state = opts.field === "status_code" ? b.status_code : b.status;
    if (state === "FINISHED" || state === "PUBLISHED") return true;
    if (state === "ERROR" || state === "EXPIRED") {
      const why = opts.field === "status_code" ? b.status : b.error_message;
      throw new PlatformError(
        "rejected",
        `${opts.platform} could not process the media (container ${state}${why ? `: ${why}` : ""})`,
      );
    }
    return null;
  });
}

/** Publishes a FINISHED container, then reads the media's permalink and time. */
export async function publishContainer(opts: {
  base: string;
  clock: Clock;
  headers: Record<string, string>;
  publishUrl: string;
  creationId: string;
  fallbackUrl: (mediaId: string) => string;
}): Promise<PublishResult> {
  const published = await callPlatform(endpoint(opts.publishUrl, "", { creation_id: opts.creationId }), {
    method: "POST",
    headers: opts.headers,
  });
  const mediaId = (published.body as { id?: string } | null)?.id;
  if (!ok(published) || !mediaId) throw graphError(published);
  const media = await callPlatform(
    endpoint(opts.base, `/${encodeURIComponent(mediaId)}`, { fields: "id,permalink,timestamp" }),
    { headers: opts.headers },
  );
  const m = (ok(media) ? media.body : null) as { permalink?: string; timestamp?: string } | null;
  return {
    platformPostId: mediaId,
    url: m?.permalink ?? opts.fallbackUrl(mediaId),
    publishedAt: graphTime(m?.timestamp) ?? opts.clock.now(),
  };
}

/**
 * A cut-off try's post on Instagram or Threads (decision 1497): the user's media list, newest first
 * (Instagram `GET /<IG_ID>/media`, Threads `GET /<THREADS_USER_ID>/threads` with `since`), the one
 * published since `since` whose caption (Instagram) or text (Threads) is exactly the post's, or null.
 * A container is published once (`media_publish` again answers "already published"), so the media is
 * there or the try never reached the platform.
 */
export async function findPublishedMedia(opts: {
  base: string;
  headers: Record<string, string>;
  user: string;
  edge: "media" | "threads";
  textField: "caption" | "text";
  text: string;
  since: Date;
  clock: Clock;
  fallbackUrl: (mediaId: string) => string;
}): Promise<PublishResult | null> {
  const a = await callPlatform(
    endpoint(opts.base, `/${encodeURIComponent(opts.user)}/${opts.edge}`, {
      fields: `id,${opts.textField},permalink,timestamp`,
      limit: "50",
      ...(opts.edge === "threads" ? { since: String(Math.floor(opts.since.getTime() / 1000)) } : {}),
    }),
    { headers: opts.headers },
  );
  if (!ok(a)) throw graphError(a);
  const data = ((a.body as { data?: Record<string, unknown>[] } | null)?.data ?? []).filter(
    (m) => typeof m.id === "string" && (m[opts.textField] ?? "") === opts.text,
  );
  const hit = data.find((m) => (graphTime(m.timestamp)?.getTime() ?? Infinity) >= opts.since.getTime());
  if (!hit) return null;
  const id = String(hit.id);
  return {
    platformPostId: id,
    url: typeof hit.permalink === "string" ? hit.permalink : opts.fallbackUrl(id),
    publishedAt: graphTime(hit.timestamp) ?? opts.clock.now(),
  };
}
