import { afterAll, describe, expect, test } from "bun:test";
import { createSign } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  campaign,
  deliver,
  h,
  mailsTo,
  outcome,
  senderProcess,
  subscriber,
  uniq,
  useSendingBed,
} from "../../testing/newsletter_sending_bed.ts";

// Amazon SES bounces and complaints through SNS (POST /api/v1/newsletter/inbound/ses; issue 34,
// decision 1456): the SNS signature verified against a certificate fetched from an allowed host. The
// certificate is made here with openssl and served on loopback; NEWSLETTER_SNS_CERT_HOSTS names that
// server and no other. Never the internet.

const dir = mkdtempSync(join(tmpdir(), "sns-"));
const makeCert = (name: string) => {
  const r = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=sns.test",
    "-keyout",
    join(dir, `${name}.key`),
    "-out",
    join(dir, `${name}.pem`),
  ]);
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return {
    key: readFileSync(join(dir, `${name}.key`), "utf8"),
    cert: readFileSync(join(dir, `${name}.pem`), "utf8"),
  };
};
const good = makeCert("good");
const other = makeCert("other");
const confirmations: string[] = [];
const serve = (cert: string) =>
  Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/confirm") {
        confirmations.push(url.search);
        return new Response("<ConfirmSubscriptionResponse/>");
      }
      return new Response(cert);
    },
  });
const allowed = serve(good.cert);
// Another host (not in the allowed list) serving a certificate whose key the forger holds.
const elsewhere = serve(other.cert);
const allowedBase = `http://127.0.0.1:${allowed.port}`;

useSendingBed({ env: { NEWSLETTER_SNS_CERT_HOSTS: `127.0.0.1:${allowed.port}` } });
afterAll(() => {
  allowed.stop(true);
  elsewhere.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

type Sns = Record<string, string>;
/** An SNS message signed as SNS signs it (SignatureVersion 2, SHA256withRSA over the fields in order). */
function sns(fields: Sns, opts: { key?: string; certUrl?: string } = {}): Sns {
  const m: Sns = {
    MessageId: crypto.randomUUID(),
    TopicArn: "arn:aws:sns:eu-west-1:123456789012:ses-events",
    Timestamp: new Date().toISOString(),
    SignatureVersion: "2",
    SigningCertURL: opts.certUrl ?? `${allowedBase}/cert.pem`,
    ...fields,
  };
  const order =
    m.Type === "Notification"
      ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"];
  const text = order
    .filter((f) => m[f] !== undefined)
    .map((f) => `${f}\n${m[f]}\n`)
    .join("");
  m.Signature = createSign("RSA-SHA256")
    .update(text)
    .sign(opts.key ?? good.key, "base64");
  return m;
}
const post = async (m: Sns) => {
  const res = await h.app.handle(
    new Request("http://localhost/api/v1/newsletter/inbound/ses", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": m.Type ?? "" },
      body: JSON.stringify(m),
    }),
  );
  return { status: res.status, body: (await res.json()) as any };
};
/** An SES event about the mail sent to `email` in campaign `subject` (its envelope sender names it). */
const sesEvent = (subject: string, email: string, event: Record<string, unknown>) =>
  JSON.stringify({ mail: { source: mailsTo(subject, email)[0]!.from, destination: [email] }, ...event });

describe("Amazon SES through SNS", () => {
  test("a SubscriptionConfirmation with a valid signature is confirmed (its SubscribeURL fetched)", async () => {
    const r = await post(
      sns({
        Type: "SubscriptionConfirmation",
        Message: "You have chosen to subscribe to the topic",
        Token: "tok-123",
        SubscribeURL: `${allowedBase}/confirm?Token=tok-123`,
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body.sns).toBe("SubscriptionConfirmation");
    expect(confirmations).toContain("?Token=tok-123");
  });

  test("bounce, complaint and delivery notifications with a valid signature act; a tampered one or a certificate from another host → 403 and nothing changes", async () => {
    const [hard, angry, fine] = ["hard", "angry", "fine"].map((n) => `${n}-${uniq()}@example.com`);
    const c = await campaign([hard!, angry!, fine!]);
    const ctx = senderProcess();
    for (const e of [hard!, angry!, fine!]) expect(await outcome(deliver(ctx, c.ids[e]!))).toBe("ok");

    const bounce = sesEvent(c.subject, hard!, {
      notificationType: "Bounce",
      bounce: {
        bounceType: "Permanent",
        bouncedRecipients: [
          { emailAddress: hard, status: "5.1.1", diagnosticCode: "smtp; 550 5.1.1 user unknown" },
        ],
      },
    });
    // Tampered: the message changed after signing.
    const signed = sns({ Type: "Notification", Message: bounce });
    const tampered = await post({ ...signed, Message: bounce.replace("5.1.1", "5.1.2") });
    expect(tampered.status).toBe(403);
    // Signed with another key, its certificate on a host not allowed.
    const foreign = await post(
      sns(
        { Type: "Notification", Message: bounce },
        { key: other.key, certUrl: `http://127.0.0.1:${elsewhere.port}/cert.pem` },
      ),
    );
    expect(foreign.status).toBe(403);
    // Signed with another key, claiming the allowed host's certificate.
    expect((await post(sns({ Type: "Notification", Message: bounce }, { key: other.key }))).status).toBe(403);
    expect((await subscriber(c.siteId, hard!)).status).toBe("active");

    const ok = await post(signed);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "5.1.1", kind: "hard", action: "bounced", changed: 1 });
    expect((await subscriber(c.siteId, hard!)).status).toBe("bounced");

    const complaint = await post(
      sns({
        Type: "Notification",
        Message: sesEvent(c.subject, angry!, {
          notificationType: "Complaint",
          complaint: { complainedRecipients: [{ emailAddress: angry }], complaintFeedbackType: "abuse" },
        }),
      }),
    );
    expect(complaint.body).toMatchObject({ action: "unsubscribed", changed: 1 });
    expect((await subscriber(c.siteId, angry!)).status).toBe("unsubscribed");

    const delivery = await post(
      sns({
        Type: "Notification",
        Message: sesEvent(c.subject, fine!, {
          notificationType: "Delivery",
          delivery: { recipients: [fine] },
        }),
      }),
    );
    expect(delivery).toMatchObject({ status: 200, body: { action: "none", changed: 0 } });
    expect((await subscriber(c.siteId, fine!)).status).toBe("active");
  });
});
