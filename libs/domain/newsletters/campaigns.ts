import {
  newsletterBounces,
  newsletterCampaigns,
  newsletterRecipients,
  newsletterSubscribers,
  notifyWorkEnded,
  sites,
} from "@site/db";
import {
  AppError,
  type Context,
  escapeHtml,
  isUuid,
  keysetPage,
  type ListQuery,
  newestFirst,
  notFound,
  type OwnedSite,
  olderThan,
  PAGE_LIMIT,
} from "@site/domain/core";
import type { JobQueue } from "@site/queue";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { type BounceRef, envelopeSender } from "./bounces.ts";
import { recordCampaignEvent } from "./campaign_events.ts";
import { htmlToText } from "./campaign_html.ts";
import { signCampaignForMail, signCampaignForMember, storableCampaignHtml } from "./campaign_media.ts";
import { sanitizeCampaignHtml } from "./campaign_sanitize.ts";
import { normalizeEmail } from "./emails.ts";
import { composeMail, feedbackId } from "./message.ts";
import type {
  CampaignCounts,
  CampaignStatus,
  CampaignSummary,
  CampaignView,
  CreateCampaignBody,
  UpdateCampaignBody,
} from "./models.ts";
import type { MailContext } from "./subscribers.ts";

type Row = typeof newsletterCampaigns.$inferSelect;

/** What starting a send needs: the context and the job queue. */
export type QueueContext = Context & { queue: JobQueue };

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const ZERO: CampaignCounts = { queued: 0, sent: 0, failed: 0, bounced: 0, refusedByPolicy: 0 };

function summary(r: Row, counts: CampaignCounts): CampaignSummary {
  return {
    id: r.id,
    subject: r.subject,
    preheader: r.preheader,
    fromName: r.fromName,
    status: r.status as CampaignStatus,
    error: r.status === "paused" ? r.error : null,
    sendAt: iso(r.sendAt),
    counts,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
  };
}

/** Delivery counts of campaigns, by id. */
export async function campaignCounts(ctx: Context, ids: string[]): Promise<Map<string, CampaignCounts>> {
  const out = new Map<string, CampaignCounts>();
  if (ids.length === 0) return out;
  const rows = await ctx.db
    .select({
      id: newsletterRecipients.campaignId,
      status: newsletterRecipients.status,
      n: sql<number>`count(*)::int`,
    })
    .from(newsletterRecipients)
    .where(inArray(newsletterRecipients.campaignId, ids))
    .groupBy(newsletterRecipients.campaignId, newsletterRecipients.status);
  for (const r of rows) {
    const c = out.get(r.id) ?? { ...ZERO };
    if (r.status === "queued" || r.status === "sending") c.queued += r.n;
    else if (r.status === "sent") c.sent += r.n;
    else if (r.status === "failed") c.failed += r.n;
    else if (r.status === "bounced") c.bounced += r.n;
    out.set(r.id, c);
  }
  // Reports that the receiver refused us (5.7.x): counted on the campaign, no subscriber changed.
  const policy = await ctx.db
    .select({ id: newsletterBounces.campaignId, n: sql<number>`count(*)::int` })
    .from(newsletterBounces)
    .where(and(inArray(newsletterBounces.campaignId, ids), eq(newsletterBounces.kind, "policy")))
    .groupBy(newsletterBounces.campaignId);
  for (const p of policy) {
    if (!p.id) continue;
    const c = out.get(p.id) ?? { ...ZERO };
    c.refusedByPolicy = p.n;
    out.set(p.id, c);
  }
  return out;
}

async function view(ctx: Context, siteId: string, r: Row): Promise<CampaignView> {
  const counts = (await campaignCounts(ctx, [r.id])).get(r.id) ?? { ...ZERO };
  return { ...summary(r, counts), html: await signCampaignForMember(ctx, siteId, r.html) };
}

async function row(ctx: Context, siteId: string, campaignId: string): Promise<Row> {
  if (!isUuid(campaignId)) throw notFound("campaign");
  const [r] = await ctx.db
    .select()
    .from(newsletterCampaigns)
    .where(and(eq(newsletterCampaigns.id, campaignId), eq(newsletterCampaigns.siteId, siteId)))
    .limit(1);
  if (!r) throw notFound("campaign");
  return r;
}

function badState(r: Row, doing: string, allowed: string): AppError {
  return new AppError("VALIDATION_ERROR", `status: the campaign is ${r.status}; ${doing} needs ${allowed}`, [
    { field: "status", status: r.status, message: `${doing} needs ${allowed}` },
  ]);
}

/** The statuses a write is allowed from, and how the 400 for any other names the step. */
type StatusGuard = { from: CampaignStatus[]; doing: string; allowed: string };

/**
 * Writes `set` (and `updatedAt`) to the site's campaign, 404 when there is none; with a guard, only
 * while its status is one of `guard.from`, any other answering 400 naming the status it has now.
 */
async function writeCampaign(
  ctx: Context,
  siteId: string,
  campaignId: string,
  set: PgUpdateSetSource<typeof newsletterCampaigns>,
  guard?: StatusGuard,
): Promise<Row> {
  const r = await row(ctx, siteId, campaignId);
  const [u] = await ctx.db
    .update(newsletterCampaigns)
    .set({ ...set, updatedAt: sql`now()` })
    .where(
      guard
        ? and(eq(newsletterCampaigns.id, r.id), inArray(newsletterCampaigns.status, guard.from))
        : eq(newsletterCampaigns.id, r.id),
    )
    .returning();
  if (u) return u;
  const now = await row(ctx, siteId, campaignId); // 404 when it went in between
  throw guard ? badState(now, guard.doing, guard.allowed) : notFound("campaign");
}

/** Creates a draft; its HTML is checked against the site's library (400 listing each bad reference). */
export async function createCampaign(
  ctx: Context,
  site: OwnedSite,
  body: CreateCampaignBody,
): Promise<CampaignView> {
  const siteId = site.id;
  const html = await storableCampaignHtml(ctx, siteId, body.html);
  const [r] = await ctx.db
    .insert(newsletterCampaigns)
    .values({
      siteId,
      subject: body.subject,
      preheader: body.preheader ?? null,
      fromName: body.fromName ?? null,
      html,
    })
    .returning();
  return view(ctx, siteId, r!);
}

/** A campaign with its draft signed for a member and its delivery counts. */
export async function getCampaign(ctx: Context, site: OwnedSite, campaignId: string): Promise<CampaignView> {
  const siteId = site.id;
  return view(ctx, siteId, await row(ctx, siteId, campaignId));
}

/** A page of the site's campaigns, newest first, without their bodies. */
export async function listCampaigns(ctx: Context, site: OwnedSite, query: ListQuery) {
  const siteId = site.id;
  const limit = query.limit ?? PAGE_LIMIT.default;
  const t = newsletterCampaigns;
  const rows = await ctx.db
    .select({ c: t, at: sql<string>`${t.createdAt}::text` })
    .from(t)
    .where(and(eq(t.siteId, siteId), olderThan(t.createdAt, t.id, query.cursor)))
    .orderBy(...newestFirst(t.createdAt, t.id))
    .limit(limit + 1);
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.c.id }));
  const counts = await campaignCounts(
    ctx,
    page.map((r) => r.c.id),
  );
  return { campaigns: page.map((r) => summary(r.c, counts.get(r.c.id) ?? { ...ZERO })), nextCursor };
}

/** Changes a draft (or a cancelled campaign, which becomes a draft again). */
export async function updateCampaign(
  ctx: Context,
  site: OwnedSite,
  campaignId: string,
  body: UpdateCampaignBody,
): Promise<CampaignView> {
  const siteId = site.id;
  const r = await row(ctx, siteId, campaignId);
  if (r.status !== "draft" && r.status !== "cancelled")
    throw badState(r, "editing", "a draft or cancelled campaign");
  const html = body.html !== undefined ? await storableCampaignHtml(ctx, siteId, body.html) : undefined;
  const [u] = await ctx.db
    .update(newsletterCampaigns)
    .set({
      subject: body.subject,
      preheader: body.preheader,
      fromName: body.fromName,
      html,
      status: "draft",
      sendAt: null,
      updatedAt: sql`now()`,
    })
    .where(and(eq(newsletterCampaigns.id, r.id), inArray(newsletterCampaigns.status, ["draft", "cancelled"])))
    .returning();
  if (!u) throw badState(await row(ctx, siteId, campaignId), "editing", "a draft or cancelled campaign");
  return view(ctx, siteId, u);
}

/** Deletes a campaign that is not sending right now. */
export async function deleteCampaign(ctx: Context, site: OwnedSite, campaignId: string): Promise<void> {
  const siteId = site.id;
  const r = await row(ctx, siteId, campaignId);
  const gone = await ctx.db
    .delete(newsletterCampaigns)
    .where(and(eq(newsletterCampaigns.id, r.id), sql`${newsletterCampaigns.status} <> 'sending'`))
    .returning({ id: newsletterCampaigns.id });
  if (gone.length === 0) throw badState(r, "deleting", "a campaign that is not sending");
}

/**
 * The preview page: the stored HTML with its bare media paths (the member's browser reads them with
 * its session cookie), under a strict Content-Security-Policy (previewHeaders).
 */
export async function previewCampaign(ctx: Context, site: OwnedSite, campaignId: string): Promise<string> {
  const siteId = site.id;
  const r = await row(ctx, siteId, campaignId);
  return wrapDocument(sanitizeCampaignHtml(r.html), {
    preheader: r.preheader,
    footer: null,
    title: r.subject,
  });
}

/**
 * The headers of the preview page: no script, no plugin, no form, no base; images, fonts and media
 * only from this service (the delivery route), styles inline; framed only by this origin.
 */
export function previewHeaders(ctx: Context): Record<string, string> {
  const origin = new URL(ctx.config.publicBaseUrl).origin;
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; img-src 'self' ${origin}; media-src 'self' ${origin}; font-src 'self' ${origin}; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'self' ${origin}`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "private, no-store",
  };
}

/** A full document around the body: the hidden preheader first, the footer (unsubscribe) last. */
export function wrapDocument(
  html: string,
  parts: { preheader: string | null; footer: string | null; title: string },
): string {
  const pre = parts.preheader
    ? `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeHtml(parts.preheader)}</div>`
    : "";
  const footer = parts.footer ?? "";
  if (/<body[\s>]/i.test(html)) {
    const withPre = html.replace(/<body([^>]*)>/i, (m) => `${m}${pre}`);
    return /<\/body>/i.test(withPre) ? withPre.replace(/<\/body>/i, `${footer}</body>`) : withPre + footer;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(parts.title)}</title></head><body>${pre}${html}${footer}</body></html>`;
}

/** The unsubscribe footer of a mail. */
export function unsubscribeFooter(url: string): { html: string; text: string } {
  return {
    html: `<p style="font-size:12px;color:#666">You receive this because you subscribed. <a href="${escapeHtml(url)}">Unsubscribe</a></p>`,
    text: `\n--\nUnsubscribe: ${url}\n`,
  };
}

/** A campaign as mailed, before the per-recipient parts: signed HTML body and its text. */
export type RenderedBody = { html: string; text: string };

/**
 * Signs a campaign's media for mail and derives its plain text: once per campaign, not per recipient.
 * With `media` (a campaign's deliveries) the images carry revocable campaign media tokens.
 */
export async function renderCampaignBody(
  ctx: Context,
  campaign: { siteId: string; html: string; media?: { id: string; mediaGeneration: number } },
): Promise<RenderedBody> {
  // Sanitized again as mailed: a body stored before the allow-list (decision 1113) is mailed clean.
  const html = await signCampaignForMail(
    ctx,
    campaign.siteId,
    sanitizeCampaignHtml(campaign.html),
    campaign.media,
  );
  return { html, text: htmlToText(html) };
}

/** The mail of a campaign for one address: the rendered body, the unsubscribe parts, the headers. */
export async function renderCampaignMail(
  ctx: Context,
  campaign: {
    id: string;
    siteId: string;
    subject: string;
    preheader: string | null;
    fromName: string | null;
    /** The stored body; not needed when `rendered` is given. */
    html?: string;
    /** The site's organization (Feedback-ID); read when not given. */
    orgId?: string;
  },
  to: { email: string; id: string; unsubscribeUrl?: string; subjectPrefix?: string; bounce?: BounceRef },
  rendered?: RenderedBody,
) {
  const body =
    rendered ?? (await renderCampaignBody(ctx, { siteId: campaign.siteId, html: campaign.html ?? "" }));
  const orgId =
    campaign.orgId ??
    (await ctx.db.select({ orgId: sites.orgId }).from(sites).where(eq(sites.id, campaign.siteId)))[0]
      ?.orgId ??
    "none";
  const footer = to.unsubscribeUrl ? unsubscribeFooter(to.unsubscribeUrl) : null;
  const html = wrapDocument(body.html, {
    preheader: campaign.preheader,
    footer: footer?.html ?? null,
    title: campaign.subject,
  });
  return composeMail(
    {
      id: to.id,
      from: { name: campaign.fromName, address: ctx.config.newsletter.mailFrom },
      to: to.email,
      subject: `${to.subjectPrefix ?? ""}${campaign.subject}`,
      html,
      text: body.text + (footer?.text ?? ""),
      unsubscribeUrl: to.unsubscribeUrl,
      envelopeFrom: to.bounce ? envelopeSender(ctx.config, to.bounce) : ctx.config.newsletter.bounceAddress,
      feedbackId: feedbackId({
        campaign: to.bounce ? campaign.id : "test",
        siteId: campaign.siteId,
        orgId,
        sender: ctx.config.newsletter.mailFrom,
      }),
    },
    { dkim: ctx.config.newsletter.dkim },
  );
}

/**
 * Test mails go freely to the organization's members (its users' addresses); to anyone else they
 * count against NEWSLETTER_TEST_SENDS_PER_DAY per organization and UTC day, taken atomically in the
 * database before anything is sent (decision 1114). Over the budget: 429 with Retry-After (the next
 * UTC midnight), nothing sent.
 */
async function takeTestSendBudget(ctx: Context, siteId: string, addresses: string[]): Promise<void> {
  const [site] = await ctx.db.select({ orgId: sites.orgId }).from(sites).where(eq(sites.id, siteId)).limit(1);
  if (!site) throw notFound("site");
  const members = await ctx.db.execute<{ email: string }>(sql`
    select lower(u.email) as email from users u join memberships m on m.user_id = u.id
    where m.org_id = ${site.orgId}::uuid and lower(u.email) in (${sql.join(
      addresses.map((a) => sql`${a}`),
      sql`, `,
    )})`);
  const known = new Set([...members].map((m) => m.email));
  const outside = addresses.filter((a) => !known.has(a)).length;
  if (outside === 0) return;
  const limit = ctx.config.newsletter.testSendsPerDay;
  const taken =
    outside > limit
      ? []
      : await ctx.db.execute(sql`
    insert into newsletter_test_sends (org_id, day, count)
    values (${site.orgId}::uuid, (now() at time zone 'utc')::date, ${outside})
    on conflict (org_id, day) do update set count = newsletter_test_sends.count + excluded.count
      where newsletter_test_sends.count + excluded.count <= ${limit}
    returning count`);
  if (taken.length > 0) return;
  const now = ctx.clock.now();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  throw new AppError(
    "RATE_LIMITED",
    `to: test mails to addresses outside the organization are limited to ${limit} a day; send tests to members' addresses, or try again tomorrow (UTC)`,
    [{ field: "to", message: `${outside} address(es) outside the organization; daily budget ${limit}` }],
    { "retry-after": String(Math.max(1, Math.ceil((midnight - now.getTime()) / 1000))) },
  );
}

/**
 * Sends a test of the draft to up to 10 addresses (in the background; failures are logged): to the
 * organization's members freely, to others within the organization's daily budget (429 beyond).
 */
export async function sendTestCampaign(
  ctx: MailContext,
  site: OwnedSite,
  campaignId: string,
  to: string[],
): Promise<void> {
  const siteId = site.id;
  const r = await row(ctx, siteId, campaignId);
  const problems: { field: string; message: string }[] = [];
  const addresses = to.map((a, i) => {
    const e = normalizeEmail(a);
    if (!e) problems.push({ field: `to.${i}`, message: `not an e-mail address: "${a.slice(0, 100)}"` });
    return e ?? "";
  });
  if (problems.length > 0)
    throw new AppError("VALIDATION_ERROR", `to: ${problems.map((p) => p.message).join("; ")}`, problems);
  await takeTestSendBudget(ctx, siteId, [...new Set(addresses)]);
  for (const email of new Set(addresses)) {
    void (async () => {
      try {
        const mail = await renderCampaignMail(ctx, r, {
          email,
          id: `test-${r.id}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
          subjectPrefix: "[Test] ",
        });
        await ctx.mailer.send(mail);
      } catch (err) {
        ctx.log.warn("newsletter test mail failed", { campaignId: r.id, cause: err });
      }
    })();
  }
}

/**
 * Moves a draft to `scheduled` (sendAt in the future) or starts it now (`sending`, one recipient row
 * per active subscriber, the send job queued). A sendAt in the past, or a site without an active
 * subscriber, answers 400.
 */
export async function sendCampaign(
  ctx: QueueContext,
  site: OwnedSite,
  campaignId: string,
  body: { sendAt?: string },
): Promise<CampaignView> {
  const siteId = site.id;
  const r = await row(ctx, siteId, campaignId);
  if (r.status !== "draft" && r.status !== "cancelled")
    throw badState(r, "sending", "a draft or cancelled campaign");
  let sendAt: Date | null = null;
  if (body.sendAt !== undefined) {
    sendAt = new Date(body.sendAt);
    if (Number.isNaN(sendAt.getTime()))
      throw new AppError("VALIDATION_ERROR", "sendAt: not a date-time", [
        { field: "sendAt", message: "ISO 8601 date-time" },
      ]);
    if (sendAt.getTime() <= ctx.clock.now().getTime())
      throw new AppError(
        "VALIDATION_ERROR",
        `sendAt: ${body.sendAt} is in the past; give a future time, or none to send now`,
        [{ field: "sendAt", message: "in the past" }],
      );
  }
  const [{ n } = { n: 0 }] = await ctx.db
    .select({ n: sql<number>`count(*)::int` })
    .from(newsletterSubscribers)
    .where(and(eq(newsletterSubscribers.siteId, siteId), eq(newsletterSubscribers.status, "active")));
  if (n === 0)
    throw new AppError(
      "VALIDATION_ERROR",
      "recipients: the site has no active subscriber; nothing would be sent",
      [{ field: "recipients", message: "no active subscriber" }],
    );
  if (sendAt) {
    const [u] = await ctx.db
      .update(newsletterCampaigns)
      .set({ status: "scheduled", sendAt, updatedAt: sql`now()` })
      .where(
        and(eq(newsletterCampaigns.id, r.id), inArray(newsletterCampaigns.status, ["draft", "cancelled"])),
      )
      .returning();
    if (!u) throw badState(await row(ctx, siteId, campaignId), "sending", "a draft or cancelled campaign");
    return view(ctx, siteId, u);
  }
  const started = await startCampaign(ctx, r.id, ["draft", "cancelled"]);
  if (!started && (await siteDeleted(ctx, siteId))) throw notFound("site");
  if (!started)
    throw badState(await row(ctx, siteId, campaignId), "sending", "a draft or cancelled campaign");
  if (started.recipients === 0) {
    await finishCampaign(ctx, r.id);
    throw new AppError(
      "VALIDATION_ERROR",
      "recipients: the site has no active subscriber; nothing would be sent",
      [{ field: "recipients", message: "no active subscriber" }],
    );
  }
  await enqueueCampaignJob(ctx, r.id);
  return getCampaign(ctx, site, r.id);
}

/** Whether the site was deleted (a send that lost the race with the delete answers 404, as the site does). */
async function siteDeleted(ctx: Context, siteId: string): Promise<boolean> {
  const [s] = await ctx.db.select({ deletedAt: sites.deletedAt }).from(sites).where(eq(sites.id, siteId));
  return !s || s.deletedAt !== null;
}

/** Queues a campaign's send job (ids per call: a finished job's id is not reused). */
export async function enqueueCampaignJob(ctx: QueueContext, campaignId: string): Promise<void> {
  await ctx.queue.enqueue(
    "newsletter-campaign",
    { campaignId },
    { jobId: `${campaignId}.${Date.now().toString(36)}` },
  );
}

/**
 * Starts a campaign in one transaction: `sending`, and one queued recipient row per subscriber active
 * now (rows already there are kept). Returns null when the campaign was not in `from`.
 */
export async function startCampaign(
  ctx: Context,
  campaignId: string,
  from: CampaignStatus[],
): Promise<{ recipients: number } | null> {
  return ctx.db.transaction(async (tx) => {
    // The site row under the lock a site delete takes (FOR UPDATE, site_delete.ts): a delete that
    // committed first is seen here and nothing starts; one that comes after waits and cancels the
    // campaign it finds sending (decision 1452).
    const [site] = await tx.execute<{ deleted: boolean }>(sql`
      select s.deleted_at is not null as deleted from sites s
      join newsletter_campaigns c on c.site_id = s.id where c.id = ${campaignId}::uuid
      for share of s`);
    if (!site || site.deleted) return null;
    const [c] = await tx
      .update(newsletterCampaigns)
      .set({ status: "sending", startedAt: sql`now()`, fannedOutAt: null, updatedAt: sql`now()` })
      .where(and(eq(newsletterCampaigns.id, campaignId), inArray(newsletterCampaigns.status, from)))
      .returning({ siteId: newsletterCampaigns.siteId });
    if (!c) return null;
    const inserted = await tx.execute(sql`
      insert into newsletter_recipients (campaign_id, subscriber_id, email)
      select ${campaignId}::uuid, s.id, s.email from newsletter_subscribers s
      where s.site_id = ${c.siteId}::uuid and s.status = 'active'
      on conflict (campaign_id, subscriber_id) do nothing`);
    return { recipients: inserted.count ?? 0 };
  });
}

/**
 * Resumes a paused campaign (the relay is fixed): `sending` again, its error cleared, and the send
 * job queued, which queues every recipient still waiting; each is still mailed exactly once (the
 * claim of decision 1102). Anything but a paused campaign answers 400 naming its status.
 */
export async function resumeCampaign(
  ctx: QueueContext,
  site: OwnedSite,
  campaignId: string,
): Promise<CampaignView> {
  const siteId = site.id;
  const u = await writeCampaign(
    ctx,
    siteId,
    campaignId,
    {
      status: "sending",
      error: null,
      runs: sql`${newsletterCampaigns.runs} + 1`,
      fannedOutAt: null,
      resumeWhenReachable: false,
    },
    { from: ["paused"], doing: "resuming", allowed: "a paused campaign" },
  );
  ctx.log.info("newsletter campaign resumed", { campaignId: u.id });
  await enqueueCampaignJob(ctx, u.id);
  return view(ctx, siteId, u);
}

/**
 * Revokes every image link mailed for a campaign (decision 1115): its media generation goes up, so
 * the campaign media tokens already mailed stop opening (403); mails sent after this carry the new
 * generation. Deleting the campaign revokes them too.
 */
export async function revokeCampaignMedia(
  ctx: Context,
  site: OwnedSite,
  campaignId: string,
): Promise<CampaignView> {
  const siteId = site.id;
  const u = await writeCampaign(ctx, siteId, campaignId, {
    mediaGeneration: sql`${newsletterCampaigns.mediaGeneration} + 1`,
  });
  ctx.log.info("newsletter campaign media revoked", { campaignId: u.id, generation: u.mediaGeneration });
  return view(ctx, siteId, u);
}

/** Ends a sending campaign as `sent` once no recipient is left to mail. */
export async function finishCampaign(ctx: Context, campaignId: string): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [done] = await tx.execute<{ id: string; site_id: string }>(sql`
      update newsletter_campaigns set status = 'sent', finished_at = now(), updated_at = now()
      where id = ${campaignId}::uuid and status = 'sending' and not exists (
        select 1 from newsletter_recipients r
        where r.campaign_id = ${campaignId}::uuid and r.status in ('queued', 'sending'))
      returning id, site_id`);
    if (!done) return false;
    // Wakes get_campaign's waiters (waitSeconds) at commit.
    await notifyWorkEnded(tx, done.id);
    // newsletter.campaign.sent commits with the status (the webhook outbox, decision 0840).
    await recordCampaignEvent(ctx, tx, {
      campaign: { id: done.id, siteId: done.site_id },
      type: "newsletter.campaign.sent",
      read: getCampaign,
    });
    return true;
  });
}

/** Cancels a scheduled campaign (sending has not started); anything else answers 400. */
export async function cancelCampaign(
  ctx: Context,
  site: OwnedSite,
  campaignId: string,
): Promise<CampaignView> {
  const siteId = site.id;
  const u = await writeCampaign(
    ctx,
    siteId,
    campaignId,
    { status: "cancelled" },
    { from: ["scheduled"], doing: "cancelling", allowed: "a scheduled campaign (sending has not started)" },
  );
  return view(ctx, siteId, u);
}
