import { createRequire } from "node:module";
import type { Config, Logger } from "@site/config";
import type { Consumer } from "@site/queue";
import type { QueueContext } from "./campaigns.ts";
import { type Mailer, openMailer } from "./mailer.ts";
import {
  createPacer,
  deliverToRecipient,
  fanOutCampaign,
  type SenderContext,
  sweepNewsletters,
} from "./sending.ts";

/** A running newsletter sender. */
export type NewsletterSender = { mailer: Mailer; stop(opts?: { graceMs?: number }): Promise<void> };

// One sender per queue in a process: the API (in-process queue) and the render daemon of
// ./scripts/start share one queue, and must not both consume it.
const running = new WeakMap<object, { sender: Promise<NewsletterSender>; users: number }>();

/**
 * Starts sending newsletters from the job queue: campaign send jobs (fan-out), per-recipient
 * deliveries (NEWSLETTER_CONCURRENCY at a time, SMTP_RATE_PER_MINUTE) and the sweep (every
 * NEWSLETTER_SWEEP_EVERY_MS; one pass at start picks up what a previous process left). The render
 * daemon runs it; so does the API when its queue is in-process (nothing else could reach it).
 */
export function startNewsletterSender(
  ctx: QueueContext,
  opts: { mailer?: Mailer; sweepEveryMs?: number } = {},
): Promise<NewsletterSender> {
  const shared = running.get(ctx.queue);
  if (shared) {
    shared.users++;
    return shared.sender;
  }
  const entry = { sender: start(ctx, opts), users: 1 };
  running.set(ctx.queue, entry);
  entry.sender.catch(() => running.delete(ctx.queue));
  return entry.sender;
}

async function start(
  ctx: QueueContext,
  opts: { mailer?: Mailer; sweepEveryMs?: number },
): Promise<NewsletterSender> {
  const log = ctx.log.child({ app: "newsletter-sender" });
  const mailer = opts.mailer ?? openMailer(ctx.config, log);
  if (mailer.kind === "outbox")
    log.info(`SMTP_URL is not set: newsletter mail is written as .eml files to ${mailer.describe}`, {
      outbox: mailer.describe,
    });
  else log.info("newsletter mail goes through SMTP", { server: mailer.describe });
  warnIfNotHttps(ctx.config.publicBaseUrl, log);
  warnIfUnaligned(ctx.config, log);
  const sctx: SenderContext = {
    ...ctx,
    log,
    mailer,
    pace: createPacer(ctx.config.newsletter.ratePerMinute),
    bodies: new Map(),
  };
  const consumers: Consumer[] = [
    ctx.queue.consume("newsletter-campaign", async (job) => {
      const n = await fanOutCampaign(sctx, job.data.campaignId);
      log.info("newsletter deliveries queued", {
        jobId: job.id,
        campaignId: job.data.campaignId,
        deliveries: n,
      });
    }),
    ctx.queue.consume("newsletter-delivery", (job) => deliverToRecipient(sctx, job), {
      concurrency: ctx.config.newsletter.concurrency,
    }),
    ctx.queue.consume("newsletter-sweep", async () => {
      const r = await sweepNewsletters(sctx);
      if (r.started + r.resumed > 0) log.info("newsletter sweep", r);
    }),
  ];
  await ctx.queue.schedule("newsletter-sweep", {
    everyMs: opts.sweepEveryMs ?? ctx.config.newsletter.sweepEveryMs,
  });
  await ctx.queue.enqueue("newsletter-sweep", {}, { jobId: `startup-${process.pid}-${Date.now()}` });
  let stopping: Promise<void> | null = null;
  const sender: NewsletterSender = {
    mailer,
    stop(stopOpts = {}) {
      const entry = running.get(ctx.queue);
      if (entry && --entry.users > 0) return Promise.resolve();
      stopping ??= (async () => {
        running.delete(ctx.queue);
        for (const c of consumers) await c.close({ graceMs: stopOpts.graceMs ?? 10_000 });
        if (!opts.mailer) await mailer.close();
      })();
      return stopping;
    },
  };
  return sender;
}

/**
 * Says at start when PUBLIC_BASE_URL is not https: mailbox providers offer one-click unsubscribe only
 * for an https List-Unsubscribe URI (RFC 8058 §3.1, https://www.rfc-editor.org/rfc/rfc8058#section-3.1),
 * so every mail's unsubscribe link would fall back to a click through a page, and Gmail and Yahoo
 * require one-click of bulk senders.
 */
export function warnIfNotHttps(publicBaseUrl: string, log: Pick<Logger, "warn">): boolean {
  if (new URL(publicBaseUrl).protocol === "https:") return false;
  log.warn(
    `PUBLIC_BASE_URL (${publicBaseUrl}) is not https: newsletter mail's List-Unsubscribe links will not be offered as one-click unsubscribe (RFC 8058 needs an https URL); set PUBLIC_BASE_URL to the service's https address`,
    { publicBaseUrl },
  );
  return true;
}

/** mailauth's DMARC alignment (relaxed: the organizational domains are the same, by the Public Suffix List). */
const { getAlignment } = createRequire(import.meta.url)("mailauth/lib/tools") as {
  getAlignment(fromDomain: string, domains: string[], strict: boolean): false | { domain: string };
};

/**
 * Says at start when neither DKIM_DOMAIN nor MAIL_BOUNCE_ADDRESS's domain shares its organizational
 * domain with MAIL_FROM's: DMARC passes only with an aligned DKIM signature or an aligned SPF
 * domain (the envelope sender's; RFC 7489 §3.1, https://www.rfc-editor.org/rfc/rfc7489#section-3.1,
 * relaxed alignment), and Gmail and Yahoo reject bulk mail that fails DMARC. Returns whether it warned.
 */
export function warnIfUnaligned(config: Pick<Config, "newsletter">, log: Pick<Logger, "warn">): boolean {
  const domainOf = (a: string) => (a.split("@").pop() ?? a).toLowerCase();
  const from = domainOf(config.newsletter.mailFrom);
  const dkim = config.newsletter.dkim?.domain ?? null;
  const bounce = domainOf(config.newsletter.bounceAddress);
  const candidates = [...(dkim ? [dkim] : []), bounce];
  if (getAlignment(from, candidates, false)) return false;
  log.warn(
    `DMARC alignment: MAIL_FROM's domain (${from}) shares its organizational domain neither with DKIM_DOMAIN (${dkim ?? "not set"}) nor with MAIL_BOUNCE_ADDRESS's domain (${bounce}): receivers that check DMARC (Gmail, Outlook, Yahoo) will reject or junk this mail. Sign with DKIM_DOMAIN=${from} (or a parent domain), or send bounces to an address at ${from}`,
    { mailFrom: from, dkimDomain: dkim, bounceDomain: bounce },
  );
  return true;
}
