/**
 * The one job catalog: every job's name, queue, payload shape (ids only, never secrets), retry policy
 * (attempts, backoff), timeout and, for a repeatable job, its period. The producers (API, metrics
 * schedule) and the consumers (render daemon, metrics app) all import it.
 */

import { type Static, type TObject, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** An id in a payload: a UUID, as every row's id is. */
const Id = (description: string) =>
  Type.String({
    pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    description,
  });

/** A payload model: the ids it names and nothing else. */
const Payload = <P extends Parameters<typeof Type.Object>[0]>(properties: P, description: string) =>
  Type.Object(properties, { additionalProperties: false, description });

/** The payload of a screenshot render job: the render's id and nothing else. */
export const RenderScreenshotPayload = Payload({ renderId: Id("the render") }, "a screenshot render");
export type RenderScreenshotPayload = Static<typeof RenderScreenshotPayload>;

/** The payload of a newsletter campaign's send job: the campaign's id. */
export const NewsletterCampaignPayload = Payload({ campaignId: Id("the campaign") }, "a campaign's send");
export type NewsletterCampaignPayload = Static<typeof NewsletterCampaignPayload>;

/** The payload of one newsletter delivery: the recipient row's id. */
export const NewsletterDeliveryPayload = Payload({ recipientId: Id("the recipient row") }, "one mail");
export type NewsletterDeliveryPayload = Static<typeof NewsletterDeliveryPayload>;

/** The payload of one social target's publication: the target's id. */
export const SocialPublishPayload = Payload({ targetId: Id("the social target") }, "one publication");
export type SocialPublishPayload = Static<typeof SocialPublishPayload>;

/** The payload of one webhook try: the delivery row and the lease its dispatcher claimed it with. */
export const WebhookDeliveryPayload = Payload(
  { deliveryId: Id("the delivery row"), leaseToken: Id("the dispatcher's lease on it") },
  "one webhook try",
);
export type WebhookDeliveryPayload = Static<typeof WebhookDeliveryPayload>;

/** The payload of a job that needs nothing (a scheduled pass). */
export const EmptyPayload = Payload({}, "a scheduled pass: nothing");
export type EmptyPayload = Static<typeof EmptyPayload>;

/** How one kind of job is run. */
export type JobSpec<M extends TObject> = {
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
  /** The payload's model: ids only, never secrets; anything else is refused. */
  payload: M;
  /** Checks a payload against `payload`; throws a TypeError naming the first fault. */
  parse(data: unknown): Static<M>;
};

/** A job's spec with `parse` derived from its payload model. */
function job<M extends TObject>(spec: Omit<JobSpec<M>, "parse">): JobSpec<M> {
  return {
    ...spec,
    parse(data) {
      if (Value.Check(spec.payload, data)) return data;
      const first = Value.Errors(spec.payload, data).First();
      const where = first?.path ? `${first.path.slice(1)}: ` : "";
      throw new TypeError(`${spec.payload.description} payload: ${where}${first?.message ?? "invalid"}`);
    },
  };
}

/** Every job the system runs. */
export const JOBS = {
  /**
   * One screenshot render. Three tries in all, counted on the render itself (beginRenderTry) so that a
   * re-enqueued job does not start a new budget: the worker makes the third try final and the sweeper
   * fails a render that reached it (decision 0009).
   */
  "render-screenshot": job({
    queue: "renders",
    attempts: 3,
    backoffMs: 2000,
    timeoutMs: 120_000,
    payload: RenderScreenshotPayload,
  }),
  /**
   * The hourly social snapshot pass. One try: a failed pass is not retried, the next period's pass takes
   * every stage still due (captureDueSnapshots works from what is due, not from what was missed).
   */
  "collect-social-metrics": job({
    queue: "social-metrics",
    attempts: 1,
    backoffMs: 60_000,
    timeoutMs: 30 * 60_000,
    repeatEveryMs: 3_600_000,
    payload: EmptyPayload,
  }),
  /**
   * A campaign's send job: starts a due campaign and fans out one delivery job per recipient not yet
   * sent. Re-run by the newsletter sweep while the campaign is sending (it only adds what is missing).
   */
  "newsletter-campaign": job({
    queue: "newsletters",
    attempts: 5,
    backoffMs: 2000,
    timeoutMs: 10 * 60_000,
    payload: NewsletterCampaignPayload,
  }),
  /**
   * One recipient's mail. Temporary SMTP failures (4xx, connection) are retried with backoff; a
   * permanent 5xx ends it bounced at once (decision 1103).
   */
  "newsletter-delivery": job({
    queue: "newsletter-deliveries",
    attempts: 5,
    backoffMs: 5000,
    timeoutMs: 120_000,
    payload: NewsletterDeliveryPayload,
  }),
  /** The newsletter sweep: starts scheduled campaigns that are due, takes up stalled sending ones. */
  "newsletter-sweep": job({
    queue: "newsletter-sweep",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    repeatEveryMs: 15_000,
    payload: EmptyPayload,
  }),
  /**
   * One try of one webhook delivery, claimed by a dispatcher (decision 0841). One try per job: the
   * retry schedule (WEBHOOK_RETRY_SCHEDULE_S) lives on the delivery row, which the dispatcher claims
   * again when it is due; a job lost with its process is claimed again once its lease runs out.
   */
  "webhook-delivery": job({
    queue: "webhooks",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    payload: WebhookDeliveryPayload,
  }),
  /**
   * One social target's publication (issue 33, decision 1470). One try per job: the target row holds the
   * state (lease, rate-limit time, a try that may have reached the platform), and the social publish
   * sweep queues it again when it is due; a job lost with its process is taken up once its lease ends.
   */
  "social-publish": job({
    queue: "social-publish",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 30 * 60_000,
    payload: SocialPublishPayload,
  }),
  /** The social publish sweep: queues targets that are due (a scheduled time, a rate-limit wait, a lost try). */
  "social-publish-sweep": job({
    queue: "social-publish-sweep",
    attempts: 1,
    backoffMs: 1000,
    timeoutMs: 60_000,
    repeatEveryMs: 5_000,
    payload: EmptyPayload,
  }),
} as const;

/** A job's name. */
export type JobName = keyof typeof JOBS;

/** The payload type of a job. */
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]["payload"]>;

/** The spec of a job, typed loosely enough to read its optional fields. */
export function jobSpec(name: JobName): JobSpec<TObject> {
  return JOBS[name];
}

/** The delay before try `attempt + 1` after try `attempt` failed. */
export function backoffDelay(name: JobName, attempt: number): number {
  return JOBS[name].backoffMs * 2 ** Math.max(0, attempt - 1);
}
