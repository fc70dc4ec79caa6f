import { AppError, type Context } from "@site/domain/core";
import { sql } from "drizzle-orm";
import { simpleParser } from "mailparser";
import { type BounceRef, findBounceRefs } from "./bounces.ts";

/** The most bytes one inbound report may have (a DSN carrying the whole original message included). */
export const MAX_INBOUND_BYTES = 5 * 1024 * 1024;

/** What an inbound report was and what it changed. */
export type InboundResult = {
  /** delivery-status (RFC 3464), feedback-report (RFC 5965), or other (neither: nothing changes). */
  report: "delivery-status" | "feedback-report" | "other";
  /** For a DSN: the most severe per-recipient Status (5.x.x before 4.x.x); null otherwise. */
  status: string | null;
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
 *   https://www.rfc-editor.org/rfc/rfc3464) whose per-recipient `Status` is 5.x.x marks the recipient
 *   `bounced`; a 4.x.x (delayed) changes nothing;
 * - an abuse report (multipart/report; report-type=feedback-report, RFC 5965
 *   https://www.rfc-editor.org/rfc/rfc5965) marks it `unsubscribed` (a complaint is a withdrawal of
 *   consent), unless its Feedback-Type is `not-spam`.
 * The recipient is found only through the tagged envelope sender (`local+<tag>@domain`, bounces.ts):
 * in the outer message's To/Delivered-To/X-Original-To, in the report (ARF Original-Mail-From), or in
 * the original message's headers (Return-Path). A tag whose MAC does not match, and a message naming
 * no recipient of ours, change nothing. Parsed with mailparser.
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
  const mail = await simpleParser(Buffer.from(raw), {
    // Report parts as attachments, not merged into the text (RFC 3464 §2, RFC 5965 §2).
    keepDeliveryStatus: true,
    skipHtmlToText: true,
    skipTextLinks: true,
  } as Parameters<typeof simpleParser>[1]);
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
  if (report === "other") return { report, status: null, action: "none", changed: 0 };

  const headerText = mail.headerLines
    .filter((l) => ENVELOPE_HEADERS.includes(l.key))
    .map((l) => l.line)
    .join("\n");
  const refs = findBounceRefs(ctx.config, [headerText, ...parts.map((p) => p.text)].join("\n"));

  if (report === "delivery-status") {
    const statuses = [...(status?.text ?? "").matchAll(/^Status:\s*([245])\.(\d{1,3})\.(\d{1,3})/gim)].map(
      (m) => `${m[1]}.${m[2]}.${m[3]}`,
    );
    const worst = statuses.find((s) => s.startsWith("5")) ?? statuses.find((s) => s.startsWith("4")) ?? null;
    if (!worst?.startsWith("5")) return { report, status: worst, action: "none", changed: 0 };
    const diagnostic = /^Diagnostic-Code:\s*(.+)$/im.exec(status?.text ?? "")?.[1]?.trim() ?? worst;
    const changed = await bounce(ctx, refs, `bounced after delivery: ${worst} ${diagnostic}`.slice(0, 1000));
    return { report, status: worst, action: "bounced", changed };
  }
  const type = /^Feedback-Type:\s*([\w-]+)/im.exec(feedback?.text ?? "")?.[1]?.toLowerCase();
  if (type === "not-spam") return { report, status: null, action: "none", changed: 0 };
  return { report, status: null, action: "unsubscribed", changed: await complain(ctx, refs) };
}

/** The subscribers the refs name (a recipient row names its subscriber). */
async function subscribersOf(ctx: Context, refs: BounceRef[]): Promise<string[]> {
  const subs = refs.filter((r) => r.kind === "s").map((r) => r.id);
  const rows = refs.filter((r) => r.kind === "r").map((r) => r.id);
  if (rows.length > 0) {
    const found = await ctx.db.execute<{ subscriber_id: string }>(sql`
      select subscriber_id from newsletter_recipients where id in (${sql.join(
        rows.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`);
    for (const f of found) subs.push(f.subscriber_id);
  }
  return [...new Set(subs)];
}

async function bounce(ctx: Context, refs: BounceRef[], reason: string): Promise<number> {
  const rows = refs.filter((r) => r.kind === "r").map((r) => r.id);
  if (rows.length > 0)
    await ctx.db.execute(sql`
      update newsletter_recipients set status = 'bounced', last_error = ${reason}, updated_at = now()
      where id in (${sql.join(
        rows.map((id) => sql`${id}::uuid`),
        sql`, `,
      )}) and status = 'sent'`);
  const subs = await subscribersOf(ctx, refs);
  if (subs.length === 0) return 0;
  const done = await ctx.db.execute(sql`
    update newsletter_subscribers set status = 'bounced', bounced_at = now(), updated_at = now()
    where id in (${sql.join(
      subs.map((id) => sql`${id}::uuid`),
      sql`, `,
    )}) and status <> 'bounced'`);
  ctx.log.info("newsletter bounce report", { subscribers: subs, reason });
  return done.count ?? 0;
}

async function complain(ctx: Context, refs: BounceRef[]): Promise<number> {
  const subs = await subscribersOf(ctx, refs);
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
