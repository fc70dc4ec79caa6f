import { afterAll, beforeAll, expect } from "bun:test";
import { createLogger } from "@site/config";
import {
  createSmtpMailer,
  deliverToRecipient,
  type Mailer,
  MailSendError,
  type SenderContext,
} from "@site/domain/newsletters";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { PermanentJobError } from "@site/queue";
import { buildTestApp, type TestApp } from "./mod.ts";

/**
 * The test bed of the newsletter sending tests (newsletter_sending_test.ts, newsletter_campaign_steps_test.ts):
 * a real smtp-server on 127.0.0.1 (some addresses refused or deferred) and the app on a real PostgreSQL;
 * `useSendingBed()` starts them for the calling file.
 */
export type Json = any;
/** A short random suffix. */
export const uniq = () => Math.random().toString(36).slice(2, 9);
/** The claim lease the bed runs with (NEWSLETTER_LEASE_MS). */
export const LEASE_MS = 1000;
/** Answered 451 to RCPT TO on every try. */
export const DEFERRED = "always-later@example.org";
/** Answered 451 to RCPT TO once (the settle-guard races below: on a first try, and on the last). */
export const DEFERRED_ONCE = { first: "once-later-1@example.org", last: "once-later-5@example.org" };
/** The operator token of the inbound route (POST /api/v1/newsletter/inbound). */
export const OPERATOR_TOKEN = "operator-token-0123456789abcdef";
/** Answered 550 to RCPT TO. */
export const REFUSED = "no-such-user@example.org";

/** The app of the calling test file (set by useSendingBed). */
export let h: TestApp;
/** The loopback SMTP server. */
export let sink: SmtpSink;
/** The organization the campaigns belong to. */
export let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
const mailers: Mailer[] = [];
/** The app's warnings and errors, as JSON lines. */
export const logLines: string[] = [];

/** Starts the SMTP sink and the app for the calling test file (with `env` besides the bed's), and stops them after it. */
export function useSendingBed(opts: { env?: Record<string, string> } = {}): void {
  beforeAll(async () => {
    sink = await startSmtpSink({
      reject: [REFUSED],
      defer: { [DEFERRED]: 1_000_000, [DEFERRED_ONCE.first]: 1, [DEFERRED_ONCE.last]: 1 },
    });
    h = await buildTestApp({
      env: {
        SMTP_URL: sink.url,
        SMTP_RATE_PER_MINUTE: "0",
        NEWSLETTER_LEASE_MS: String(LEASE_MS),
        PUBLIC_BASE_URL: "https://news.example.test",
        MAIL_BOUNCE_ADDRESS: "bounces@news.example.test",
        FETCH_ALLOW_HOSTS: "127.0.0.1:9",
        OPERATOR_TOKEN,
        ...opts.env,
      },
      log: createLogger("warn", {}, { sink: (line) => logLines.push(line) }),
    });
    owner = await h.seedOrg({
      siteLimit: 50,
      scopes: ["content:read", "content:write", "sites:write", "webhooks:write"],
    });
    // Every newsletter.campaign.paused of the organization is recorded in the webhook outbox.
    const hook = await h.call("POST", "/api/v1/webhooks", {
      key: owner.key,
      body: { url: "http://127.0.0.1:9/paused", events: ["newsletter.campaign.paused"] },
    });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => {
    for (const m of mailers.splice(0)) await m.close();
    await h.close();
    await sink.close();
  });
}

/** A sending process: its own SMTP connections, no pace, its own rendered bodies. */
export function senderProcess(
  over: { leaseMs?: number; connections?: number; newsletter?: Record<string, unknown> } = {},
): SenderContext {
  const mailer = createSmtpMailer(sink.url, {
    connections: over.connections ?? 4,
    log: createLogger("silent" as never),
  });
  mailers.push(mailer);
  const newsletter = { ...h.ctx.config.newsletter, leaseMs: over.leaseMs ?? LEASE_MS, ...over.newsletter };
  const config = { ...h.ctx.config, newsletter };
  return { ...h.ctx, config, mailer, pace: async () => {}, bodies: new Map() };
}

/** One delivery of a recipient row, as the queue would run it (try `attempt` of `attempts`). */
export const deliver = (ctx: SenderContext, recipientId: string, attempt = 1, attempts = 5) =>
  deliverToRecipient(ctx, { data: { recipientId }, attempt, attempts });

/** How a delivery ended: "ok", or the error it threw (its class, kind and message). */
export const outcome = (p: Promise<void>) =>
  p.then(
    () => "ok",
    (e) =>
      e instanceof MailSendError
        ? `MailSendError ${e.kind} ${e.responseCode}`
        : `${e instanceof PermanentJobError ? "PermanentJobError" : e?.constructor?.name}: ${e.message}`,
  );

/** A call with the owner's key: its status and parsed body. */
export const call = async (method: string, path: string, body?: unknown) => {
  const res = await h.call(method, path, { key: owner.key, body });
  return { status: res.status, body: (await res.json().catch(() => null)) as Json };
};

/** A site with these subscribers and a campaign; sent now unless `send` is false. */
export async function campaign(
  emails: string[],
  opts: { send?: boolean | string; html?: (siteId: string) => Promise<string> } = {},
) {
  const site = await call("POST", "/api/v1/sites", { name: "Rules News", slug: `r-${uniq()}` });
  const siteId = site.body.site.id as string;
  if (emails.length > 0) {
    const added = await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      subscribers: emails.map((email) => ({ email })),
    });
    expect(added.status).toBe(200);
  }
  const subject = `Rules ${uniq()}`;
  const c = await call("POST", `/api/v1/sites/${siteId}/campaigns`, {
    subject,
    preheader: "The preheader",
    fromName: "Garden Club",
    html: opts.html ? await opts.html(siteId) : "<p>Hello from the garden</p>",
  });
  const cid = c.body.campaign.id as string;
  if (opts.send !== false) {
    const body = typeof opts.send === "string" ? { sendAt: opts.send } : undefined;
    const sent = await call("POST", `/api/v1/sites/${siteId}/campaigns/${cid}/send`, body);
    expect(sent.status).toBe(202);
  }
  const rows = await recipients(cid);
  return { siteId, cid, subject, ids: Object.fromEntries(rows.map((r) => [r.email, r.id])) };
}

/** A recipient row as the tests read it. */
export type Row = {
  id: string;
  email: string;
  status: string;
  tries: number;
  leased: boolean;
  last_error: string | null;
  sent: boolean;
};
/** A campaign's recipient rows, by address. */
export const recipients = async (cid: string) =>
  (await h.sql`
    select id, email, status, tries, lease_until is not null as leased, last_error, sent_at is not null as sent
    from newsletter_recipients where campaign_id = ${cid}::uuid order by email`) as unknown as Row[];
/** One recipient row of a campaign. */
export const row = async (cid: string, email: string) =>
  (await recipients(cid)).find((r) => r.email === email)!;
/** Whether a recipient row's claim lease has run out. */
export const leaseRanOut = async (rid: string) => {
  const [x] =
    await h.sql`select lease_until < now() as out from newsletter_recipients where id = ${rid}::uuid`;
  return x?.out === true;
};
/** A campaign's row: status, error, finished, runs, fanned out within the minute. */
export const campaignRow = async (cid: string) =>
  (
    await h.sql`select status, error, finished_at is not null as finished, runs,
      fanned_out_at is not null and fanned_out_at > now() - interval '1 minute' as fanned_now
      from newsletter_campaigns where id = ${cid}::uuid`
  )[0] as { status: string; error: string | null; finished: boolean; runs: number; fanned_now: boolean };
/** A subscriber of a site: status and whether it bounced. */
export const subscriber = async (siteId: string, email: string) =>
  (
    await h.sql`select status, bounced_at is not null as bounced_at from newsletter_subscribers
      where site_id = ${siteId}::uuid and email = ${email}`
  )[0] as { status: string; bounced_at: boolean };
/** The messages the sink accepted with this subject for this address. */
export const mailsTo = (subject: string, email: string) =>
  sink.messages.filter((m) => m.parsed?.subject === subject && m.to.includes(email));
/** The newsletter.campaign.paused events recorded for a campaign. */
export const pausedEvents = async (cid: string) =>
  (await h.sql`select data from webhook_events
    where type = 'newsletter.campaign.paused' and data->>'id' = ${cid}`) as unknown as { data: Json }[];

/** Polls `check` every 20 ms until it holds; throws after `ms`. */
export const waitFor = async (what: string, check: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
};
