import { AppError, type Context } from "@site/domain/core";
import { sql } from "drizzle-orm";
import { simpleParser } from "mailparser";
import { recordBounce } from "./bounce_log.ts";
import { type BounceRef, findBounceRefs } from "./bounces.ts";
import { classifyReply } from "./reply_classes.ts";

/** The most bytes one inbound report may have (a DSN carrying the whole original message included). */
export const MAX_INBOUND_BYTES = 5 * 1024 * 1024;

/** What an inbound report was and what it changed. */
export type InboundResult = {
  /** delivery-status (RFC 3464), feedback-report (RFC 5965), or other (neither: nothing changes). */
  report: "delivery-status" | "feedback-report" | "other";
  /** For a DSN: the Status of its most telling recipient block (hard, then policy, then soft); null otherwise. */
  status: string | null;
  /** For a DSN: that Status classified (RFC 3463, reply_classes.ts); null otherwise. */
  kind: "hard" | "soft" | "policy" | null;
  /** What was done to the recipients it names: bounced, unsubscribed, or nothing. */
  action: "bounced" | "unsubscribed" | "none";
  /** How many subscribers changed. */
  changed: number;
};

/** The header fields of the outer message where a relay records the address the report came to. */
const ENVELOPE_HEADERS = ["to", "cc", "delivered-to", "x-original-to", "envelope-to", "x-envelope-to"];
/** The parts of a report that may name our tagged envelope sender or carry the original's headers. */
const REPORT_PARTS = new Set([
  "message/delivery-status",
  "message/global-delivery-status",
  "message/feedback-report",
  "text/rfc822-headers",
  "message/rfc822",
  "message/global",
  "message/global-headers",
]);

/**
 * Reads a message that came back to the bounce address (MAIL_BOUNCE_ADDRESS) and acts on it
 * (decision 1112):
 * - a delivery status notification (multipart/report; report-type=delivery-status, RFC 3464
 *   https://www.rfc-editor.org/rfc/rfc3464): its per-recipient `Status` classified as RFC 3463 says
 *   (reply_classes.ts, decision 1451): 5.1.x and 5.2.1 mark the recipient `bounced`; 4.x.x and 5.2.2
 *   are soft (NEWSLETTER_SOFT_BOUNCE_LIMIT within 30 days bounce it); 5.7.x is about us and only
 *   counts on the campaign (`refusedByPolicy`); each is kept in the subscriber's bounce log;
 * - an abuse report (multipart/report; report-type=feedback-report, RFC 5965
 *   https://www.rfc-editor.org/rfc/rfc5965) marks it `unsubscribed` (a complaint is a withdrawal of
 *   consent), unless its Feedback-Type is `not-spam`.
 * The recipient is found only through the tagged envelope sender (`local+<tag>@domain`, bounces.ts):
 * in the outer message's To/Delivered-To/X-Original-To, in the report (ARF Original-Mail-From), or in
 * the original message's headers (Return-Path). A tag whose MAC does not match, and a message naming
 * no recipient of ours, change nothing. Parsed with mailparser; a message it cannot read answers 400.
 */
export async function processInboundReport(ctx: Context, raw: Uint8Array): Promise<InboundResult> {
  if (raw.byteLength === 0)
    throw new AppError("VALIDATION_ERROR", "body: empty; send the report as message/rfc822", [
      { field: "body", message: "empty" },
    ]);
  if (raw.byteLength > MAX_INBOUND_BYTES)
    throw new AppError("VALIDATION_ERROR", `body: at most ${MAX_INBOUND_BYTES} bytes`, [
      { field: "body", message: "too large" },
    ]);
  let mail: Awaited<ReturnType<typeof simpleParser>>;
  try {
    mail = await simpleParser(Buffer.from(raw), {
      // Report parts as attachments, not merged into the text (RFC 3464 §2, RFC 5965 §2).
      keepDeliveryStatus: true,
      skipHtmlToText: true,
      skipTextLinks: true,
    } as Parameters<typeof simpleParser>[1]);
  } catch (err) {
    // mailparser refuses what it cannot read (too many MIME parts, a broken structure): the
    // sender's message is malformed, not our failure.
    throw new AppError(
      "VALIDATION_ERROR",
      `body: not a readable message/rfc822 (${(err as Error).message ?? "unreadable"})`,
      [{ field: "body", message: "malformed message" }],
    );
  }
  const ct = mail.headers.get("content-type") as
    | { value?: string; params?: Record<string, string> }
    | undefined;
  const reportType =
    ct?.value?.toLowerCase() === "multipart/report" ? ct.params?.["report-type"]?.toLowerCase() : undefined;
  const parts = mail.attachments
    .filter((a) => REPORT_PARTS.has(a.contentType.toLowerCase()))
    .map((a) => ({
      type: a.contentType.toLowerCase(),
      text: a.content.toString("utf8").slice(0, 1024 * 1024),
    }));
  const status = parts.find((p) => p.type.endsWith("delivery-status"));
  const feedback = parts.find((p) => p.type === "message/feedback-report");
  const report: InboundResult["report"] =
    reportType === "delivery-status" || (!reportType && status)
      ? "delivery-status"
      : reportType === "feedback-report" || (!reportType && feedback)
        ? "feedback-report"
        : "other";
  if (report === "other") return { report, status: null, kind: null, action: "none", changed: 0 };

  const headerText = mail.headerLines
    .filter((l) => ENVELOPE_HEADERS.includes(l.key))
    .map((l) => l.line)
    .join("\n");
  const refs = findBounceRefs(ctx.config, [headerText, ...parts.map((p) => p.text)].join("\n"));

  if (report === "delivery-status") {
    const text = status?.text ?? "";
    // Each per-recipient block (RFC 3464 §2.3) with its Status and Diagnostic-Code, classified by
    // reply_classes.ts; the report counts as its most telling block: hard, then policy, then soft.
    const blocks = text
      .split(/\r?\n\s*\r?\n/)
      .map((block) => ({
        status: /^Status:\s*([245]\.\d{1,3}\.\d{1,3})/im.exec(block)?.[1] ?? null,
        diagnostic: /^Diagnostic-Code:\s*(.+(?:\r?\n[ \t].+)*)$/im.exec(block)?.[1]?.trim() ?? "",
      }))
      .filter((b) => b.status !== null)
      .map((b) => ({ ...b, cls: classifyReply({ status: b.status, text: b.diagnostic }) }));
    const rank = { hard: 0, policy: 1, soft: 2, none: 3 } as const;
    const worst = blocks.sort((a, b) => rank[a.cls.kind] - rank[b.cls.kind])[0];
    if (!worst || worst.cls.kind === "none")
      return { report, status: worst?.status ?? null, kind: null, action: "none", changed: 0 };
    const kind = worst.cls.kind;
    const diagnostic = worst.diagnostic || worst.status!;
    const changed = await applyReport(ctx, refs, { status: worst.status!, kind, diagnostic });
    return {
      report,
      status: worst.status,
      kind,
      action: kind === "hard" || changed > 0 ? "bounced" : "none",
      changed,
    };
  }
  const type = /^Feedback-Type:\s*([\w-]+)/im.exec(feedback?.text ?? "")?.[1]?.toLowerCase();
  if (type === "not-spam") return { report, status: null, kind: null, action: "none", changed: 0 };
  return { report, status: null, kind: null, action: "unsubscribed", changed: await complain(ctx, refs) };
}

/**
 * Records a classified report for each recipient the refs name (recordBounce: hard bounces, soft counts
 * towards the limit, policy only counts on the campaign); a hard one also marks the recipient row
 * `bounced`. Returns how many subscribers became `bounced`.
 */
export async function applyReport(
  ctx: Context,
  refs: BounceRef[],
  report: { status: string; kind: "hard" | "soft" | "policy"; diagnostic: string },
): Promise<number> {
  const targets = await targetsOf(ctx, refs);
  const reason = `after delivery: ${report.status} ${report.diagnostic}`.slice(0, 1000);
  const rows = refs.filter((r) => r.kind === "r").map((r) => r.id);
  if (report.kind === "hard" && rows.length > 0)
    await ctx.db.execute(sql`
      update newsletter_recipients set status = 'bounced', last_error = ${`bounced ${reason}`}, updated_at = now()
      where id in (${sql.join(
        rows.map((id) => sql`${id}::uuid`),
        sql`, `,
      )}) and status = 'sent'`);
  let changed = 0;
  for (const t of targets)
    if (await recordBounce(ctx, { ...t, ...report, diagnostic: report.diagnostic })) changed++;
  if (targets.length > 0)
    ctx.log.info("newsletter delivery report", {
      subscribers: targets.map((t) => t.subscriberId),
      kind: report.kind,
      reason,
    });
  return changed;
}

/** The subscribers (and campaigns) the refs name: a recipient row names both, a confirmation its subscriber. */
async function targetsOf(
  ctx: Context,
  refs: BounceRef[],
): Promise<{ subscriberId: string; campaignId: string | null }[]> {
  const out = new Map<string, string | null>();
  for (const r of refs) if (r.kind === "s") out.set(r.id, null);
  const rows = refs.filter((r) => r.kind === "r").map((r) => r.id);
  if (rows.length > 0) {
    const found = await ctx.db.execute<{ subscriber_id: string; campaign_id: string }>(sql`
      select subscriber_id, campaign_id from newsletter_recipients where id in (${sql.join(
        rows.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`);
    for (const f of found) out.set(f.subscriber_id, f.campaign_id);
  }
  return [...out].map(([subscriberId, campaignId]) => ({ subscriberId, campaignId }));
}

/** Marks the subscribers the refs name `unsubscribed` (a complaint withdraws consent); returns how many changed. */
export async function complain(ctx: Context, refs: BounceRef[]): Promise<number> {
  const subs = (await targetsOf(ctx, refs)).map((t) => t.subscriberId);
  if (subs.length === 0) return 0;
  const done = await ctx.db.execute(sql`
    update newsletter_subscribers set status = 'unsubscribed', unsubscribed_at = coalesce(unsubscribed_at, now()), updated_at = now()
    where id in (${sql.join(
      subs.map((id) => sql`${id}::uuid`),
      sql`, `,
    )}) and status in ('pending', 'active')`);
  ctx.log.info("newsletter complaint", { subscribers: subs });
  return done.count ?? 0;
}
