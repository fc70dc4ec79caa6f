import type { Clock } from "@site/config";
import type { PublishResult } from "@site/domain/social";
import { callPlatform, endpoint, graphError, num, ok } from "./_http.ts";

// Shared by the Meta Graph platforms (Instagram, Threads): insights lists, timestamps and the
// container → publish → permalink flow.

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

/** Publishes through a Graph media container: create it, publish it, then read its permalink and time. */
export async function publishGraphContainer(opts: {
  base: string;
  /** The time of publication when the platform does not say it. */
  clock: Clock;
  headers: Record<string, string>;
  container: string;
  publish: (creationId: string) => string;
  fallbackUrl: (mediaId: string) => string;
}): Promise<PublishResult> {
  const container = await callPlatform(opts.container, { method: "POST", headers: opts.headers });
  const creationId = (container.body as { id?: string } | null)?.id;
  if (!ok(container) || !creationId) throw graphError(container);
  const published = await callPlatform(opts.publish(creationId), { method: "POST", headers: opts.headers });
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
