/**
 * What a mail server's reply, or a delivery status notification's Status, says about a recipient
 * (decision 1451). One classifier for the SMTP replies of a send (RCPT TO) and for inbound reports.
 *
 * - `hard`: the address is bad for good: it bounces.
 * - `soft`: try later; NEWSLETTER_SOFT_BOUNCE_LIMIT of them within 30 days bounce the address.
 * - `policy`: the receiver refused *us* (authentication, reputation, relaying, content): about the
 *   sender, never the subscriber; at RCPT TO the campaign pauses, in a report it is only counted.
 * - `none`: a success (2.x.x), nothing to record.
 */
export type ReplyKind = "hard" | "soft" | "policy" | "none";

/** A reply classified: its kind and the status it was read from (enhanced code, else the reply code). */
export type ReplyClass = { kind: ReplyKind; status: string };

/**
 * The enhanced status code in a reply or Diagnostic-Code (RFC 3463 §2, `class.subject.detail`,
 * https://www.rfc-editor.org/rfc/rfc3463#section-2; as RFC 2034 §3 places it after the reply code,
 * also in a multi-line reply's `550-5.1.1` lines).
 */
export function enhancedStatus(text: string): string | null {
  const m = /(?:^|[\s;:-])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/**
 * Texts of replies without an enhanced code that are about the sender, not the recipient, from the
 * receivers' own documentation and logs:
 * - Postfix `Relay access denied` (smtpd_relay_restrictions, https://www.postfix.org/SMTPD_ACCESS_README.html),
 *   `Client host rejected`, `Sender address rejected`, RBL `blocked using zen.spamhaus.org`;
 * - Exim `relay not permitted`, `rejected because <ip> is in a black list at …`
 *   (https://www.exim.org/exim-html-current/doc/html/spec_html/ch-access_control_lists.html);
 * - Gmail `unauthenticated sender`, `not authenticated`, `DMARC policy`, `rate limited`
 *   (https://support.google.com/a/answer/3726730);
 * - Outlook `Access denied, banned sending IP`, `Service unavailable, Client host … blocked using Spamhaus`
 *   (https://learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/);
 * - Yahoo `Messages from … temporarily deferred due to user complaints`, `not accepted for policy
 *   reasons` (https://senders.yahooinc.com/smtp-error-codes/).
 */
const POLICY_TEXT =
  /relay(?:ing)? (?:access )?(?:denied|not permitted|prohibited)|not (?:permitted|allowed) to relay|unable to relay|client host rejected|sender address rejected|black ?list|block ?list|blocked|banned|spamhaus|spamcop|barracuda|\b(?:dns)?rbl\b|\bdnsbl\b|listed (?:at|in|on)|policy|spam|reputation|unauthenticated|not authenticated|authentication|\bdmarc\b|\bspf\b|\bdkim\b|complaints|rate limit|too many (?:messages|connections)|access denied/i;

/** Texts that say the mailbox is full (over quota: soft, RFC 3463 §3.3 X.2.2). */
const FULL_TEXT =
  /mailbox (?:is )?full|over ?quota|quota exceeded|out of storage|insufficient (?:system )?storage/i;

/**
 * Classifies a reply (`code` the three-digit reply code when known; `text` the reply or the
 * Diagnostic-Code; `status` an explicit DSN Status field, RFC 3464 §2.3.4):
 * - class 2 → none; class 4 → soft (RFC 3463 §3.1 "persistent transient failure");
 * - 5.1.x addressing → hard (§3.2), except 5.1.7/5.1.8 (the *sender's* address is bad) → policy;
 * - 5.2.1 mailbox disabled → hard; 5.2.2 mailbox full → soft (§3.3: "a transient failure … may be
 *   reported as permanent"); 5.2.3 message too long and other 5.2.x → soft;
 * - 5.3.x mail system, 5.4.x network and routing, 5.5.x protocol, 5.6.x content, 5.7.x security or
 *   policy (§3.4–3.8) → policy: none of them says the address is bad;
 * - 5.0.0 and replies without an enhanced code: the text decides (policy texts first, then full
 *   mailbox, then unknown user); a bare 5xx is hard (RFC 5321 §4.2.2: 550 "mailbox unavailable").
 */
export function classifyReply(input: {
  code?: number | null;
  text?: string | null;
  status?: string | null;
}): ReplyClass {
  const text = input.text ?? "";
  const status = input.status ?? enhancedStatus(text);
  const code = input.code ?? (Number(/^\s*([245]\d\d)/.exec(text)?.[1]) || null);
  // RFC 2034 §4: the class of the enhanced code matches the reply code's first digit; the reply wins.
  const klass = code ? String(code)[0] : status?.[0];
  const shown = status ?? (code ? String(code) : "5.0.0");
  if (klass === "2") return { kind: "none", status: shown };
  if (klass === "4") return { kind: "soft", status: shown };
  if (status && status !== "5.0.0" && klass === "5") {
    const [, subject, detail] = status.split(".").map(Number) as [number, number, number];
    if (subject === 1) return { kind: detail === 7 || detail === 8 ? "policy" : "hard", status: shown };
    if (subject === 2) return { kind: detail === 1 ? "hard" : "soft", status: shown };
    return { kind: "policy", status: shown };
  }
  if (POLICY_TEXT.test(text)) return { kind: "policy", status: shown };
  if (FULL_TEXT.test(text)) return { kind: "soft", status: shown };
  return { kind: "hard", status: shown };
}
