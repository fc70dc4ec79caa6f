import MailComposer from "nodemailer/lib/mail-composer";
import { type DkimSettings, signMessage } from "./dkim.ts";
import type { OutgoingMail } from "./mailer.ts";

/** What one mail says. */
export type MailContent = {
  /** A stable id: the Message-ID's left part and the outbox file name. */
  id: string;
  from: { name: string | null; address: string };
  to: string;
  subject: string;
  html: string;
  text: string;
  /** The RFC 8058 one-click unsubscribe URL; absent for confirmation mails. */
  unsubscribeUrl?: string;
  /** The envelope sender (MAIL FROM: where bounces go); default the From address. */
  envelopeFrom?: string;
  /** The Feedback-ID header's value (feedbackId()). */
  feedbackId?: string;
};

/**
 * Gmail's Feedback-ID (`a:b:c:SenderId`, https://support.google.com/mail/answer/6254652): Gmail's
 * feedback loop reports spam rates per value of each field, so a sender sees which campaign, site or
 * organization draws complaints. Ours: the campaign (or the kind of mail: `confirm`, `test`), the
 * site, the organization (ids without dashes) and the sender (MAIL_FROM's domain), which stays the
 * same across all our mail as Gmail asks.
 */
export function feedbackId(parts: {
  campaign: string;
  siteId: string;
  orgId: string;
  sender: string;
}): string {
  const id = (x: string) => x.replace(/[^A-Za-z0-9]/g, "");
  const domain = (parts.sender.split("@").pop() ?? parts.sender).replace(/[^A-Za-z0-9.-]/g, "");
  return [id(parts.campaign), id(parts.siteId), id(parts.orgId), domain].join(":");
}

/**
 * Composes a multipart/alternative mail (text and HTML) with nodemailer's MailComposer. With an
 * unsubscribe URL it carries `List-Unsubscribe: <url>` and `List-Unsubscribe-Post:
 * List-Unsubscribe=One-Click` (RFC 8058 §3.1, https://www.rfc-editor.org/rfc/rfc8058#section-3.1:
 * an HTTPS URI and the POST header together), so mail clients offer one-click unsubscribe. With DKIM
 * settings the message is signed (dkim.ts), the signature covering both of those headers.
 */
export async function composeMail(
  content: MailContent,
  opts: { dkim: DkimSettings | null } = { dkim: null },
): Promise<OutgoingMail> {
  const domain = content.from.address.split("@")[1] ?? "localhost";
  const headers: Record<string, string> = {};
  if (content.feedbackId) headers["Feedback-ID"] = content.feedbackId;
  if (content.unsubscribeUrl) {
    headers["List-Unsubscribe"] = `<${content.unsubscribeUrl}>`;
    headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click";
  }
  const composer = new MailComposer({
    from: content.from.name
      ? { name: content.from.name, address: content.from.address }
      : content.from.address,
    to: content.to,
    subject: content.subject,
    html: content.html,
    text: content.text,
    messageId: `<${content.id}@${domain}>`,
    headers,
  });
  const raw = await new Promise<Buffer>((resolve, reject) =>
    composer.compile().build((err, buf) => (err ? reject(err) : resolve(buf))),
  );
  return {
    id: content.id,
    from: content.envelopeFrom ?? content.from.address,
    to: content.to,
    raw: opts.dkim ? await signMessage(raw, opts.dkim) : raw,
  };
}
