import { newsletterCampaigns, notifyWorkEnded } from "@site/db";
import type { Context } from "@site/domain/core";
import type { Job } from "@site/queue";
import { PermanentJobError } from "@site/queue";
import { eq, sql } from "drizzle-orm";
import type postgres from "postgres";
import { recordBounce } from "./bounce_log.ts";
import { recordCampaignEvent } from "./campaign_events.ts";
import {
  enqueueCampaignJob,
  finishCampaign,
  getCampaign,
  type QueueContext,
  type RenderedBody,
  renderCampaignBody,
  renderCampaignMail,
  startCampaign,
} from "./campaigns.ts";
import { type Mailer, MailSendError, type OutgoingMail } from "./mailer.ts";
import { newsletterLink } from "./tokens.ts";

/** What the sender runs on: the context, the queue, the mailer, its pace and its rendered campaigns. */
export type SenderContext = QueueContext & {
  mailer: Mailer;
  pace: () => Promise<void>;
  bodies: Map<string, { at: number; body: Promise<RenderedBody> }>;
};

/**
 * A sending campaign's body, rendered once and kept a short while (a sending campaign cannot change):
 * at most a minute, and at most a tenth of the share tokens' lifetime, so mailed tokens stay fresh.
 */
function campaignBody(
  ctx: SenderContext,
  c: { id: string; siteId: string; mediaGeneration: number },
): Promise<RenderedBody> {
  const keepMs = Math.min(60_000, ctx.config.newsletter.mailMediaTtlSeconds * 100);
  const now = Date.now();
  // Per media generation: after a revoke the next mail carries the new one at once.
  const id = `${c.id}.${c.mediaGeneration}`;
  const hit = ctx.bodies.get(id);
  if (hit && now - hit.at < keepMs) return hit.body;
  for (const [k, b] of ctx.bodies) if (now - b.at >= keepMs) ctx.bodies.delete(k);
  const body = (async () => {
    const [row] = await ctx.db
      .select({ html: newsletterCampaigns.html })
      .from(newsletterCampaigns)
      .where(eq(newsletterCampaigns.id, c.id));
    if (!row) throw new Error(`campaign ${c.id} is gone`);
    return renderCampaignBody(ctx, {
      siteId: c.siteId,
      html: row.html,
      media: { id: c.id, mediaGeneration: c.mediaGeneration },
    });
  })();
  ctx.bodies.set(id, { at: now, body });
  body.catch(() => ctx.bodies.delete(id));
  return body;
}

/**
 * A pace of `perMinute` messages a minute in this process (SMTP_RATE_PER_MINUTE): each call waits for
 * its slot. 0: no wait.
 */
export function createPacer(perMinute: number): () => Promise<void> {
  if (perMinute <= 0) return async () => {};
  const gap = 60_000 / perMinute;
  let next = 0;
  return async () => {
    const now = performance.now();
    const slot = Math.max(now, next);
    next = slot + gap;
    if (slot > now) await Bun.sleep(slot - now);
  };
}

type Claimed = {
  id: string;
  campaign_id: string;
  email: string;
  tries: number;
  subscriber_id: string;
  subscriber_status: string;
  site_id: string;
  org_id: string;
  subject: string;
  preheader: string | null;
  from_name: string | null;
  media_generation: number;
};

/**
 * One recipient's mail, exactly once (decision 1102): the row is claimed with a lease (queued, or a
 * claim whose lease ran out: that process died before committing), the message is written to the SMTP
 * server, and the row is marked sent in the database before the end-of-data mark that makes the
 * server deliver it. A process killed before that mark delivers nothing (the server drops a message
 * whose connection closes mid-DATA) and its row is taken again after the lease; killed after, the row
 * is already sent. A temporary failure (4xx, connection) puts the row back for a retry with backoff.
 * Only a 5xx to the recipient's RCPT TO ends it bounced, and the subscriber with it; a permanent
 * failure that is not about the recipient (AUTH, MAIL FROM, the message refused), or a temporary one
 * that outlives the retries, pauses the campaign with the server's reply and bounces nobody; a
 * recipient deferred through every try ends failed (decision 1110).
 */
export async function deliverToRecipient(
  ctx: SenderContext,
  job: Pick<Job<"newsletter-delivery">, "data" | "attempt" | "attempts">,
): Promise<void> {
  const leaseMs = ctx.config.newsletter.leaseMs;
  await ctx.pace();
  const [r] = await ctx.db.execute<Claimed>(sql`
    update newsletter_recipients r
    set status = 'sending', lease_until = now() + ${`${leaseMs} milliseconds`}::interval, tries = r.tries + 1, updated_at = now()
    from newsletter_campaigns c, newsletter_subscribers s, sites st
    where r.id = ${job.data.recipientId}::uuid and c.id = r.campaign_id and s.id = r.subscriber_id
      and st.id = c.site_id
      and c.status = 'sending'
      and (r.status = 'queued' or (r.status = 'sending' and r.lease_until < now()))
    returning r.id, r.campaign_id, r.email, r.tries, r.subscriber_id, s.status as subscriber_status,
      c.site_id, st.org_id, c.subject, c.preheader, c.from_name, c.media_generation`);
  if (!r) return; // sent, finished, or claimed by a live process
  if (r.subscriber_status !== "active") {
    // Unsubscribed or bounced since the send started: never mailed.
    await settle(ctx, r, "skipped", null);
    return;
  }
  let mail: OutgoingMail;
  try {
    const campaign = {
      id: r.campaign_id,
      siteId: r.site_id,
      orgId: r.org_id,
      subject: r.subject,
      preheader: r.preheader,
      fromName: r.from_name,
      mediaGeneration: r.media_generation,
    };
    mail = await renderCampaignMail(
      ctx,
      campaign,
      {
        email: r.email,
        id: `${r.campaign_id}.${r.id}`,
        unsubscribeUrl: newsletterLink(ctx, "unsubscribe", r.subscriber_id),
        bounce: { kind: "r", id: r.id },
      },
      await campaignBody(ctx, campaign),
    );
  } catch (err) {
    await settle(ctx, r, "failed", String(err));
    throw new PermanentJobError("the mail could not be composed", { cause: err });
  }
  const client = (ctx.db as unknown as { $client: postgres.Sql }).$client;
  let reserved: postgres.ReservedSql | null = null;
  let committing: Promise<unknown> | null = null;
  let preparing: Promise<unknown> | null = null;
  let released = false;
  /** Marks the row sent in a transaction left open; returns the COMMIT to write with the end of DATA. */
  const prepareSent = async (): Promise<() => void> => {
    reserved = await client.reserve();
    // Sent together (one round trip): postgres.js pipelines queries on one connection.
    const begun = reserved`begin`;
    // The campaign not cancelled, under a share lock held until the COMMIT at the end of DATA: a site
    // delete (which cancels the campaign) either committed first, and the message is withdrawn, or
    // waits for this mail (decision 1452). A pause lets a claim already made finish (decision 1110).
    const live = reserved`
      select 1 from newsletter_campaigns where id = ${r.campaign_id}::uuid and status in ('sending', 'paused') for share`;
    const updating = reserved`
      update newsletter_recipients set status = 'sent', sent_at = now(), lease_until = null, updated_at = now()
      where id = ${r.id}::uuid and status = 'sending' and tries = ${r.tries} returning id`;
    await begun;
    const sending = await live;
    const done = await updating;
    if (done.length === 0) throw new Error("the claim was lost (lease expired and taken): message withdrawn");
    if (sending.length === 0)
      throw new Error("the campaign was cancelled (or its site deleted): message withdrawn");
    const tx = reserved;
    return () => {
      committing = tx.unsafe(WRITE_NOW_COMMIT).execute();
    };
  };
  /**
   * Ends the reserved transaction before anything else touches the row (it holds the row's lock):
   * waits for its COMMIT, or rolls back one prepared for a send that failed first. Idempotent.
   */
  const release = async () => {
    if (released) return;
    released = true;
    await preparing?.catch(() => {});
    await (committing as Promise<unknown> | null)?.catch((err: unknown) =>
      ctx.log.error("newsletter commit failed", { recipientId: r.id, cause: err }),
    );
    const tx = reserved as postgres.ReservedSql | null;
    if (tx && !committing) await tx`rollback`.catch(() => {});
    tx?.release();
  };
  try {
    await ctx.mailer.send(mail, {
      // The row is marked sent in a transaction held open on a reserved connection; its COMMIT is
      // written to PostgreSQL in the same turn as the end of DATA (decision 1102).
      beforeCommit: () => {
        const prepared = prepareSent();
        preparing = prepared;
        return prepared;
      },
    });
  } catch (err) {
    await release();
    const e =
      err instanceof MailSendError
        ? err
        : new MailSendError(String(err), "transient", null, false, { cause: err });
    if (e.kind === "recipient") {
      // Only a 5xx to this recipient's RCPT TO bounces it (decision 1110).
      await settle(ctx, r, "bounced", e.message, { force: e.committed });
      await recordBounce(ctx, {
        subscriberId: r.subscriber_id,
        campaignId: r.campaign_id,
        status: e.reply?.status ?? String(e.responseCode ?? "5.0.0"),
        kind: "hard",
        diagnostic: e.message,
      });
      ctx.log.info("newsletter recipient bounced", { recipientId: r.id, code: e.responseCode });
      await finishCampaign(ctx, r.campaign_id);
      return;
    }
    const lastTry = job.attempt >= job.attempts;
    if (e.kind === "relay" || (lastTry && e.command !== "RCPT TO")) {
      // Not about this recipient: nobody bounces; the row waits in line and the campaign pauses
      // until a member resumes it (the resume queues every waiting row again).
      await settle(ctx, r, "queued", e.message, { force: e.committed });
      // No reply at all (refused, reset, timed out): the relay is gone, and the sweep resumes the
      // campaign once it answers again (decision 1450). A refusal waits for a member.
      await pauseCampaign(ctx, r.campaign_id, pauseReason(e, job.attempt), {
        resumeWhenReachable: e.kind === "transient" && e.responseCode === null,
      });
      return;
    }
    if (lastTry) {
      // A recipient deferred (4xx, or 5.2.2 mailbox full, to its RCPT TO) through every try: it
      // fails, and counts as one soft bounce of the subscriber (decision 1451).
      await settle(ctx, r, "failed", e.message, { force: e.committed });
      await recordBounce(ctx, {
        subscriberId: r.subscriber_id,
        campaignId: r.campaign_id,
        status: e.reply?.status ?? String(e.responseCode ?? "4.0.0"),
        kind: "soft",
        diagnostic: e.message,
      });
      await finishCampaign(ctx, r.campaign_id);
      throw new PermanentJobError(`gave up after ${job.attempt} tries: ${e.message}`, { cause: e });
    }
    // Back in line for the next try (the queue waits the backoff).
    await settle(ctx, r, "queued", e.message, { force: e.committed });
    throw e;
  } finally {
    await release();
  }
  await finishCampaign(ctx, r.campaign_id);
}

/** The sentence a paused campaign shows: what the mail server refused, and its reply. */
export function pauseReason(e: MailSendError, tries: number): string {
  const reply = e.message.replace(/\s+/g, " ").trim().slice(0, 500);
  const cmd = (e.command ?? "").toUpperCase();
  if (e.kind === "transient" && e.responseCode === null)
    return `The mail server could not be reached after ${tries} tries (${reply}); sending is paused and goes on by itself once the server answers again (or resume it).`;
  if (e.kind === "transient")
    return `The mail server kept failing after ${tries} tries (${reply}); sending is paused: check the relay, then resume.`;
  if (cmd.startsWith("AUTH"))
    return `The mail server refused the login (${cmd}): ${reply}. Check SMTP_URL's user and password, then resume.`;
  if (cmd === "RCPT TO")
    return `The mail server refused to take the mail for the recipients (RCPT TO): ${reply}. That is about the relay or this sender (relaying, policy, a blocklist), not the subscribers: nobody was bounced. Check that the relay lets this service send (SMTP_URL's login, the sending address and IP), then resume.`;
  if (cmd === "MAIL FROM")
    return `The mail server refused the sender address (MAIL FROM): ${reply}. Check MAIL_BOUNCE_ADDRESS / MAIL_FROM and what the relay lets this service send as, then resume.`;
  if (cmd === "DATA" || e.committed)
    return `The mail server refused the message: ${reply}. Check DKIM, SPF and DMARC for the sender's domain, then resume.`;
  return `The mail server could not be used: ${reply}. Check SMTP_URL and the relay, then resume.`;
}

/**
 * Pauses a sending campaign: nothing more is sent (deliveries claim rows only while it is sending)
 * until POST …/resume. Logged as a warning with the reason. Returns whether this call paused it.
 */
export async function pauseCampaign(
  ctx: Context,
  campaignId: string,
  reason: string,
  opts: { resumeWhenReachable?: boolean } = {},
): Promise<boolean> {
  const paused = await ctx.db.transaction(async (tx) => {
    const [done] = await tx.execute<{ id: string; site_id: string }>(sql`
      update newsletter_campaigns set status = 'paused', error = ${reason},
        resume_when_reachable = ${opts.resumeWhenReachable ?? false}, updated_at = now()
      where id = ${campaignId}::uuid and status = 'sending'
      returning id, site_id`);
    if (!done) return false;
    // Wakes get_campaign's waiters (waitSeconds) at commit.
    await notifyWorkEnded(tx, done.id);
    // newsletter.campaign.paused commits with the status (the webhook outbox, decision 0840).
    await recordCampaignEvent(ctx, tx, {
      campaign: { id: done.id, siteId: done.site_id },
      type: "newsletter.campaign.paused",
      read: getCampaign,
    });
    return true;
  });
  if (paused) ctx.log.warn("newsletter campaign paused", { campaignId, reason });
  return paused;
}

/**
 * COMMIT, padded past postgres.js's 1 KiB write buffer so that the client writes it to the socket
 * in the same turn it is executed (a shorter statement waits for setImmediate), right before the
 * end of DATA: the window in which a killed process has committed a row whose mail never left is the
 * gap between two socket writes, not a database round trip.
 */
const WRITE_NOW_COMMIT = `/* ${"-".repeat(1100)} */ commit`;

/** Ends a claimed row (only while our claim holds, unless `force`: the row was committed as sent). */
async function settle(
  ctx: Context,
  r: Claimed,
  status: "queued" | "failed" | "bounced" | "skipped",
  error: string | null,
  opts: { force?: boolean } = {},
): Promise<void> {
  const guard = opts.force ? sql`` : sql` and status = 'sending' and tries = ${r.tries}`;
  await ctx.db.execute(sql`
    update newsletter_recipients set status = ${status}, lease_until = null, last_error = ${error?.slice(0, 1000) ?? null}, updated_at = now()
    where id = ${r.id}::uuid${guard}`);
  if (status !== "queued") await finishCampaign(ctx, r.campaign_id);
}

/**
 * A campaign's send job: queues one delivery job per recipient not yet mailed (queued, or claimed by a
 * process whose lease ran out). Job ids carry the row's try count, so a waiting job is not queued
 * twice and a row taken back after a crash gets a new job.
 */
export async function fanOutCampaign(ctx: QueueContext, campaignId: string): Promise<number> {
  const [c] = await ctx.db
    .update(newsletterCampaigns)
    .set({ fannedOutAt: sql`now()` })
    .where(eq(newsletterCampaigns.id, campaignId))
    .returning({ status: newsletterCampaigns.status, runs: newsletterCampaigns.runs });
  if (c?.status !== "sending") return 0;
  // After a resume the ids are new: the jobs of the paused run may be finished yet still kept.
  const run = c.runs > 0 ? `.r${c.runs}` : "";
  const rows = await ctx.db.execute<{ id: string; tries: number }>(sql`
    select id, tries from newsletter_recipients
    where campaign_id = ${campaignId}::uuid
      and (status = 'queued' or (status = 'sending' and lease_until < now()))`);
  const list = [...rows];
  for (let i = 0; i < list.length; i += 100) {
    await Promise.all(
      list
        .slice(i, i + 100)
        .map((row) =>
          ctx.queue.enqueue(
            "newsletter-delivery",
            { recipientId: row.id },
            { jobId: `${row.id}.${row.tries}${run}` },
          ),
        ),
    );
  }
  if (list.length === 0) await finishCampaign(ctx, campaignId);
  return list.length;
}

/**
 * The newsletter sweep: starts scheduled campaigns that are due, queues the send job again for a
 * sending campaign whose last fan-out is older than the lease (jobs lost with an in-process queue, or
 * rows whose process died holding them), and, given the mailer, resumes the campaigns paused because
 * the relay could not be reached once it answers again (decision 1450).
 */
export async function sweepNewsletters(
  ctx: QueueContext & { mailer?: Mailer },
): Promise<{ started: number; resumed: number }> {
  if (ctx.mailer) await resumeReachable(ctx, ctx.mailer);
  const due = await ctx.db.execute<{ id: string }>(sql`
    select id from newsletter_campaigns where status = 'scheduled' and send_at <= ${ctx.clock.now().toISOString()}::timestamptz`);
  let started = 0;
  for (const { id } of due) {
    const s = await startCampaign(ctx, id, ["scheduled"]);
    if (!s) continue;
    started++;
    await enqueueCampaignJob(ctx, id);
  }
  const stalled = await ctx.db.execute<{ id: string }>(sql`
    select id from newsletter_campaigns where status = 'sending'
      and (fanned_out_at is null or fanned_out_at < now() - ${`${ctx.config.newsletter.leaseMs} milliseconds`}::interval)`);
  for (const { id } of stalled) await enqueueCampaignJob(ctx, id);
  return { started, resumed: stalled.length };
}

/**
 * Resumes the campaigns paused because the relay gave no reply at all, when it answers now (a
 * connection, its greeting, EHLO): a relay back from an outage takes the campaign up without anyone
 * (decision 1450). Each resume is a new run, as POST …/resume makes one.
 */
async function resumeReachable(ctx: QueueContext, mailer: Mailer): Promise<void> {
  const waiting = await ctx.db.execute<{ id: string }>(sql`
    select id from newsletter_campaigns where status = 'paused' and resume_when_reachable limit 100`);
  if (waiting.length === 0 || !(await mailer.reachable())) return;
  for (const { id } of waiting) {
    const [u] = await ctx.db.execute<{ id: string }>(sql`
      update newsletter_campaigns set status = 'sending', error = null, runs = runs + 1, fanned_out_at = null,
        resume_when_reachable = false, updated_at = now()
      where id = ${id}::uuid and status = 'paused' and resume_when_reachable returning id`);
    if (!u) continue;
    ctx.log.info("newsletter campaign resumed: the mail server answers again", { campaignId: id });
    await enqueueCampaignJob(ctx, id);
  }
}
