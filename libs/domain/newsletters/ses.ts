import { createPublicKey, createVerify } from "node:crypto";
import { isIP } from "node:net";
import { AppError, type Context } from "@site/domain/core";
import { findBounceRefs } from "./bounces.ts";
import { applyReport, complain, type InboundResult } from "./inbound.ts";
import { classifyReply } from "./reply_classes.ts";

/** An Amazon SNS message as POSTed to an HTTPS subscription (https://docs.aws.amazon.com/sns/latest/dg/http-notification-json.html). */
type SnsMessage = {
  Type: string;
  MessageId: string;
  TopicArn: string;
  Subject?: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  SubscribeURL?: string;
  Token?: string;
};

/** What the SES route answers: the inbound answer, with the SNS message type. */
export type SesResult = InboundResult & { sns: string };

/** The fields signed, in order, per message type (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html). */
const SIGNED: Record<string, (keyof SnsMessage)[]> = {
  Notification: ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"],
  SubscriptionConfirmation: [
    "Message",
    "MessageId",
    "SubscribeURL",
    "Timestamp",
    "Token",
    "TopicArn",
    "Type",
  ],
  UnsubscribeConfirmation: ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
};

const forbidden = (why: string) => new AppError("FORBIDDEN", `the SNS message is not genuine: ${why}`);

/**
 * Whether a URL may be fetched for SNS: https on a host of NEWSLETTER_SNS_CERT_HOSTS (`*` stands for
 * one DNS label: `sns.*.amazonaws.com` by default, AWS's signing hosts). Plain http only for a
 * loopback address named in the list (a test's own server). Decision 1456.
 */
export function snsUrlAllowed(raw: string, hosts: string[]): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const hostPort = url.port ? `${host}:${url.port}` : host;
  const listed = hosts.some((pattern) => {
    const re = new RegExp(
      `^${pattern
        .toLowerCase()
        .split("*")
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[a-z0-9-]+")}$`,
    );
    return re.test(hostPort) || re.test(host);
  });
  if (!listed) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && (host === "localhost" || (isIP(host) > 0 && /^(127\.|::1$)/.test(host)));
}

const certs = new Map<string, Promise<string>>();

async function signingCert(url: string): Promise<string> {
  let hit = certs.get(url);
  if (!hit) {
    hit = (async () => {
      const res = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`the signing certificate answered ${res.status}`);
      const pem = (await res.text()).slice(0, 20_000);
      createPublicKey(pem); // a certificate (or key) that node can read, or it throws
      return pem;
    })();
    certs.set(url, hit);
    hit.catch(() => certs.delete(url));
  }
  return hit;
}

/** Verifies an SNS message's signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) against its certificate. */
async function verifySns(ctx: Context, m: SnsMessage): Promise<void> {
  const fields = SIGNED[m.Type];
  if (!fields) throw forbidden(`unknown Type "${m.Type}"`);
  if (!snsUrlAllowed(m.SigningCertURL, ctx.config.newsletter.snsCertHosts))
    throw forbidden("SigningCertURL is not on a host of NEWSLETTER_SNS_CERT_HOSTS");
  const algorithm =
    m.SignatureVersion === "2" ? "RSA-SHA256" : m.SignatureVersion === "1" ? "RSA-SHA1" : null;
  if (!algorithm) throw forbidden(`SignatureVersion "${m.SignatureVersion}"`);
  let pem: string;
  try {
    pem = await signingCert(m.SigningCertURL);
  } catch (err) {
    throw forbidden(`the signing certificate could not be read (${(err as Error).message})`);
  }
  const text = fields
    .filter((f) => m[f] !== undefined)
    .map((f) => `${f}\n${m[f]}\n`)
    .join("");
  const ok = createVerify(algorithm).update(text, "utf8").verify(pem, m.Signature, "base64");
  if (!ok) throw forbidden("the signature does not match");
}

function parseSns(raw: string): SnsMessage {
  let m: Partial<SnsMessage>;
  try {
    m = JSON.parse(raw) as Partial<SnsMessage>;
  } catch {
    throw new AppError("VALIDATION_ERROR", "body: not an SNS message (JSON)", [
      { field: "body", message: "not JSON" },
    ]);
  }
  for (const f of [
    "Type",
    "MessageId",
    "Message",
    "Timestamp",
    "SignatureVersion",
    "Signature",
    "SigningCertURL",
    "TopicArn",
  ] as const)
    if (typeof m?.[f] !== "string")
      throw new AppError("VALIDATION_ERROR", `body: an SNS message needs ${f}`, [
        { field: f, message: "missing" },
      ]);
  return m as SnsMessage;
}

type SesEvent = {
  notificationType?: string;
  eventType?: string;
  mail?: { source?: string; headers?: { name: string; value: string }[] };
  bounce?: {
    bounceType?: string;
    bouncedRecipients?: { emailAddress?: string; status?: string; diagnosticCode?: string }[];
  };
  complaint?: { complaintFeedbackType?: string };
};

/**
 * Amazon SES bounces and complaints through SNS (POST /api/v1/newsletter/inbound/ses, decision 1456):
 * the SNS signature is verified first (certificate host checked against NEWSLETTER_SNS_CERT_HOSTS;
 * anything not genuine → 403, nothing changes). A SubscriptionConfirmation is confirmed by fetching its
 * SubscribeURL (same host rule). A Notification carries an SES event
 * (https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html): its `mail.source` is our
 * tagged envelope sender, which names the recipient (bounces.ts); a Bounce is classified as an
 * inbound DSN is (the recipient's `status` and `diagnosticCode`, else Permanent → hard, Transient →
 * soft), a Complaint unsubscribes (unless `not-spam`), a Delivery changes nothing.
 */
export async function processSesNotification(ctx: Context, raw: string): Promise<SesResult> {
  const m = parseSns(raw);
  await verifySns(ctx, m);
  const none = { report: "other" as const, status: null, kind: null, action: "none" as const, changed: 0 };
  if (m.Type === "SubscriptionConfirmation") {
    if (!m.SubscribeURL || !snsUrlAllowed(m.SubscribeURL, ctx.config.newsletter.snsCertHosts))
      throw forbidden("SubscribeURL is not on a host of NEWSLETTER_SNS_CERT_HOSTS");
    const res = await fetch(m.SubscribeURL, { redirect: "error", signal: AbortSignal.timeout(5000) }).catch(
      (err: Error) => {
        throw new AppError("SERVICE_UNAVAILABLE", `confirming the SNS subscription failed: ${err.message}`);
      },
    );
    ctx.log.info("SNS subscription confirmed", { topicArn: m.TopicArn, status: res.status });
    return { ...none, sns: m.Type };
  }
  if (m.Type !== "Notification") return { ...none, sns: m.Type };
  let event: SesEvent;
  try {
    event = JSON.parse(m.Message) as SesEvent;
  } catch {
    return { ...none, sns: m.Type };
  }
  const type = event.notificationType ?? event.eventType;
  const headers = (event.mail?.headers ?? []).map((h) => `${h.name}: ${h.value}`).join("\n");
  const refs = findBounceRefs(ctx.config, `${event.mail?.source ?? ""}\n${headers}`);
  if (type === "Bounce") {
    const permanent = event.bounce?.bounceType === "Permanent";
    const first = event.bounce?.bouncedRecipients?.[0] ?? {};
    const text = first.diagnosticCode ?? "";
    let cls = classifyReply({ status: first.status ?? null, text });
    if (!first.status) cls = { kind: permanent ? cls.kind : "soft", status: permanent ? "5.0.0" : "4.0.0" };
    if (cls.kind === "none") return { ...none, report: "delivery-status", sns: m.Type };
    const kind = cls.kind;
    const changed = await applyReport(ctx, refs, {
      status: cls.status,
      kind,
      diagnostic: text || `SES ${event.bounce?.bounceType ?? ""} bounce`,
    });
    const action = kind === "hard" || changed > 0 ? ("bounced" as const) : ("none" as const);
    return { report: "delivery-status", status: cls.status, kind, action, changed, sns: m.Type };
  }
  if (type === "Complaint") {
    if (event.complaint?.complaintFeedbackType === "not-spam")
      return { ...none, report: "feedback-report", sns: m.Type };
    const changed = await complain(ctx, refs);
    return {
      report: "feedback-report",
      status: null,
      kind: null,
      action: "unsubscribed",
      changed,
      sns: m.Type,
    };
  }
  return { ...none, sns: m.Type };
}
