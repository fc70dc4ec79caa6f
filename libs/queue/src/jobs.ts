/**
 * The one job catalog: every job's name, queue, payload shape (ids only, never secrets), retry policy
 * (attempts, backoff), timeout and, for a repeatable job, its period. The producers (API, metrics
 * schedule) and the consumers (render daemon, metrics app) all import it.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The payload of a screenshot render job: the render's id and nothing else. */
export type RenderScreenshotPayload = { renderId: string };

/** The payload of a newsletter campaign's send job: the campaign's id. */
export type NewsletterCampaignPayload = { campaignId: string };

/** The payload of one newsletter delivery: the recipient row's id. */
export type NewsletterDeliveryPayload = { recipientId: string };

/** The payload of one social target's publication: the target's id. */
export type SocialPublishPayload = { targetId: string };

/** The payload of one webhook try: the delivery row and the lease its dispatcher claimed it with. */
export type WebhookDeliveryPayload = { deliveryId: string; leaseToken: string };

/** The payload of a job that needs nothing (a scheduled pass). */
export type EmptyPayload = Record<string, never>;

/** How one kind of job is run. */
export type JobSpec<P> = {
  /** The queue its jobs wait in; a consumer of one job kind never sees another's. */
  queue: string;
  /**
   * Tries in all, the first included: the job's one retry policy. A failure thrown as PermanentJobError
   * ends it at once; a try handed back at shutdown is not counted.
   */
  attempts: number;
  /** Exponential backoff between tries: delay * 2^(try-1) ms. */
  backoffMs: number;
  /** A try that runs longer is aborted and counts as a transient failure. */
  timeoutMs: number;
  /** For a repeatable job: one run per period across every process sharing the queue. */
  repeatEveryMs?: number;
  /** Checks a payload; throws on anything but the declared ids. */
  parse(data: unknown): P;
};

function parseRenderPayload(data: unknown): RenderScreenshotPayload {
  const d = data as Record<string, unknown> | null;
  if (!d || typeof d !== "object" || Array.isArray(d)) throw new TypeError("payload must be an object");
  const keys = Object.keys(d);
  if (keys.length !== 1 || keys[0] !== "renderId") throw new TypeError("payload carries only renderId");
  if (typeof d.renderId !== "string" || !UUID.test(d.renderId))
    throw new TypeError("renderId must be a UUID");
  return { renderId: d.renderId };
}

function parseIdPayload<K extends string>(field: K, data: unknown): Record<K, string> {
  const d = data as Record<string, unknown> | null;
  if (!d || typeof d !== "object" || Array.isArray(d)) throw new TypeError("payload must be an object");
  const keys = Object.keys(d);
  if (keys.length !== 1 || keys[0] !== field) throw new TypeError(`payload carries only ${field}`);
  if (typeof d[field] !== "string" || !UUID.test(d[field] as string))
    throw new TypeError(`${field} must be a UUID`);
  return { [field]: d[field] } as Record<K, string>;
}

function parseWebhookPayload(data: unknown): WebhookDeliveryPayload {
  const d = data as Record<string, unknown> | null;
  if (!d || typeof d !== "object" || Array.isArray(d)) throw new TypeError("payload must be an object");
  const keys = Object.keys(d).sort();
  if (keys.length !== 2 || keys[0] !== "deliveryId" || keys[1] !== "leaseToken")
    throw new TypeError("payload carries only deliveryId and leaseToken");
  for (const k of keys)
    if (typeof d[k] !== "string" || !UUID.test(d[k] as string)) throw new TypeError(`${k} must be a UUID`);
  return { deliveryId: d.deliveryId as string, leaseToken: d.leaseToken as string };
}

function parseEmptyPayload(data: unknown): EmptyPayload {
  if (!data || typeof data !== "object" || Array.isArray(data) || Object.keys(data).length > 0)
    throw new TypeError("payload must be an empty object");
  return {};
}

/** Every job the system runs. */
export const JOBS = {
  /**
   * One screenshot render. Three tries in all, counted on the render itself (beginRenderTry) so that a
   * re-enqueued job does not start a new budget: the worker makes the third try final and the sweeper
   * fails a render that reached it (decision 0009).
   */
  "render-screenshot": {
    queue: "renders",
    attempts: 3,
    backoffMs: 2000,
    timeoutMs: 120_000,
    parse: parseRenderPayload,
  } satisfies JobSpec<RenderScreenshotPayload>,
  /**
   * The hourly social snapshot pass. One try: a failed pass is not retried, the next period's pass takes
   * every stage still due (captureDueSnapshots works from what is due, not from what was missed).
   */
  "collect-social-metrics": {
    queue: "social-metrics",
    attempts: 1,
    backoffMs: 60_000,
    timeoutMs: 30 * 60_000,
    repeatEveryMs: 3_600_000,
    parse: parseEmptyPayload,
  } satisfies JobSpec<EmptyPayload>,
  /**
   * A campaign's send job: starts a due campaign and fans out one delivery job per recipient not yet
   * sent. Re-run by the newsletter sweep while the campaign is sending (it only adds what is missing).
   */
  "newsletter-campaign": {
    queue: "newsletters",
    attempts: 5,
    backoffMs: 2000,
    timeoutMs: 10 * 60_000,
    parse: (data: unknown): NewsletterCampaignPayload => parseIdPayload("campaignId", data),
  } satisfies JobSpec<NewsletterCampaignPayload>,
  /**
   * One recipient's mail. Temporary SMTP failures (4xx, connection) are retried with backoff; a
   * permanent 5xx ends it bounced at once (decision 1103).
   */
  "newsletter-delivery": {
    queue: "newsletter-deliveries",
    attempts: 5,
    backoffMs: 5000,
    timeoutMs: 120_000,
    parse: (data: unknown): NewsletterDeliveryPayload => parseIdPayload("recipientId", data),
  } satisfies JobSpec<NewsletterDeliveryPayload>,
  /** The newsletter sweep: starts scheduled campaigns that are due, takes up stalled sending ones. */
  "newsletter-sweep": {
    queue: "newsletter-sweep",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    repeatEveryMs: 15_000,
    parse: parseEmptyPayload,
  } satisfies JobSpec<EmptyPayload>,
  /**
   * One try of one webhook delivery, claimed by a dispatcher (decision 0841). One try per job: the
   * retry schedule (WEBHOOK_RETRY_SCHEDULE_S) lives on the delivery row, which the dispatcher claims
   * again when it is due; a job lost with its process is claimed again once its lease runs out.
   */
  "webhook-delivery": {
    queue: "webhooks",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    parse: parseWebhookPayload,
  } satisfies JobSpec<WebhookDeliveryPayload>,
  /**
   * One social target's publication (issue 33, decision 1470). One try per job: the target row holds the
   * state (lease, rate-limit time, a try that may have reached the platform), and the social publish
   * sweep queues it again when it is due; a job lost with its process is taken up once its lease ends.
   */
  "social-publish": {
    queue: "social-publish",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 30 * 60_000,
    parse: (data: unknown): SocialPublishPayload => parseIdPayload("targetId", data),
  } satisfies JobSpec<SocialPublishPayload>,
  /** The social publish sweep: queues targets that are due (a scheduled time, a rate-limit wait, a lost try). */
  "social-publish-sweep": {
    queue: "social-publish-sweep",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    repeatEveryMs: 5_000,
    parse: parseEmptyPayload,
  } satisfies JobSpec<EmptyPayload>,
} as const;

/** A job's name. */
export type JobName = keyof typeof JOBS;

/** The payload type of a job. */
export type JobPayload<N extends JobName> = ReturnType<(typeof JOBS)[N]["parse"]>;

/** The spec of a job, typed loosely enough to read its optional fields. */
export function jobSpec(name: JobName): JobSpec<unknown> {
  return JOBS[name];
}

/** The delay before try `attempt + 1` after try `attempt` failed. */
export function backoffDelay(name: JobName, attempt: number): number {
  return JOBS[name].backoffMs * 2 ** Math.max(0, attempt - 1);
}
