import { describe, expect, test } from "bun:test";
import { recordBounce } from "@site/domain/newsletters";
import type { ReceivedMail } from "@site/domain/testing";
import {
  call,
  campaign,
  campaignRow,
  deliver,
  h,
  mailsTo,
  OPERATOR_TOKEN,
  outcome,
  row,
  senderProcess,
  sink,
  subscriber,
  uniq,
  useSendingBed,
} from "../../testing/newsletter_sending_bed.ts";

// Mail replies read as RFC 3463 classifies them (CONTRACT "Mail replies read as the mail standards
// classify them", issue 34, decision 1451): at RCPT TO only 5.1.x and 5.2.1 bounce the recipient; a
// policy refusal pauses the campaign and bounces nobody. Inbound reports: hard, soft (counted within
// 30 days), policy (counted on the campaign). A bounce log per subscriber, and reactivate.

useSendingBed();

const subscriberId = async (siteId: string, email: string) =>
  (
    await h.sql`select id from newsletter_subscribers where site_id = ${siteId}::uuid and email = ${email}`
  )[0]!.id as string;

const inbound = async (body: string) => {
  const res = await h.app.handle(
    new Request("http://localhost/api/v1/newsletter/inbound", {
      method: "POST",
      headers: { "content-type": "message/rfc822", authorization: `Bearer ${OPERATOR_TOKEN}` },
      body,
    }),
  );
  return { status: res.status, body: (await res.json()) as any };
};

/** A DSN (RFC 3464) for one received mail, with this Status and diagnostic. */
function dsn(mail: ReceivedMail, status: string, diagnostic: string): string {
  const b = `dsn-${uniq()}`;
  const original = mail.raw.toString("utf8").split(/\r?\n\r?\n/)[0];
  return [
    "From: Mail Delivery System <MAILER-DAEMON@mx.example.org>",
    `To: ${mail.from}`,
    "Subject: Undelivered Mail Returned to Sender",
    "MIME-Version: 1.0",
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${b}"`,
    "",
    `--${b}`,
    "Content-Type: text/plain",
    "",
    "The mail system could not deliver your message.",
    `--${b}`,
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.example.org",
    "",
    `Final-Recipient: rfc822; ${mail.to[0]}`,
    `Action: ${status.startsWith("5") ? "failed" : "delayed"}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${diagnostic}`,
    "",
    `--${b}`,
    "Content-Type: text/rfc822-headers",
    "",
    original,
    "",
    `--${b}--`,
    "",
  ].join("\r\n");
}

describe("at RCPT TO", () => {
  test("554 5.7.1 Relay access denied at every RCPT TO: the campaign pauses naming the reply, nobody is bounced; after resume each subscriber gets exactly one mail", async () => {
    const emails = [1, 2, 3].map((i) => `relay${i}-${uniq()}@example.com`);
    const c = await campaign(emails);
    const ctx = senderProcess();
    sink.refuseRcpt = "554 5.7.1 <x@example.com>: Relay access denied";
    try {
      for (const e of emails) expect(await outcome(deliver(ctx, c.ids[e]!))).toBe("ok");
    } finally {
      sink.refuseRcpt = null;
    }
    const paused = await campaignRow(c.cid);
    expect(paused.status).toBe("paused");
    expect(paused.error).toContain("Relay access denied");
    for (const e of emails) expect((await subscriber(c.siteId, e)).status).toBe("active");
    for (const e of emails) expect((await row(c.cid, e)).status).toBe("queued");
    expect((await call("POST", `/api/v1/sites/${c.siteId}/campaigns/${c.cid}/resume`)).status).toBe(202);
    for (const e of emails) expect(await outcome(deliver(ctx, c.ids[e]!))).toBe("ok");
    expect((await campaignRow(c.cid)).status).toBe("sent");
    for (const e of emails) expect(mailsTo(c.subject, e)).toHaveLength(1);
  });

  test("550 without an enhanced code naming a blocklist pauses too; 550 5.1.1 user unknown bounces that one subscriber, and its bounce log shows it", async () => {
    const [bad, fine] = [`gone-${uniq()}@example.com`, `fine-${uniq()}@example.com`];
    const c = await campaign([bad, fine]);
    const ctx = senderProcess();
    sink.rcptReplies.set(bad, "550 5.1.1 <gone>: Recipient address rejected: User unknown");
    try {
      expect(await outcome(deliver(ctx, c.ids[bad]!))).toBe("ok");
    } finally {
      sink.rcptReplies.delete(bad);
    }
    expect((await subscriber(c.siteId, bad)).status).toBe("bounced");
    expect((await subscriber(c.siteId, fine)).status).toBe("active");
    expect((await campaignRow(c.cid)).status).toBe("sending");
    const sid = await subscriberId(c.siteId, bad);
    const shown = await call("GET", `/api/v1/sites/${c.siteId}/subscribers/${sid}`);
    expect(shown.status).toBe(200);
    expect(shown.body.subscriber.status).toBe("bounced");
    expect(shown.body.subscriber.bounces).toHaveLength(1);
    expect(shown.body.subscriber.bounces[0]).toMatchObject({ status: "5.1.1", kind: "hard" });
    expect(shown.body.subscriber.bounces[0].diagnostic).toContain("User unknown");
    expect(Date.parse(shown.body.subscriber.bounces[0].at)).toBeGreaterThan(Date.now() - 60_000);

    sink.rcptReplies.set(
      fine,
      "550 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org",
    );
    try {
      expect(await outcome(deliver(ctx, c.ids[fine]!))).toBe("ok");
    } finally {
      sink.rcptReplies.delete(fine);
    }
    expect((await campaignRow(c.cid)).status).toBe("paused");
    expect((await subscriber(c.siteId, fine)).status).toBe("active");

    // Reactivate: the bounced one is active again; an active one may be reactivated too (no change).
    const re = await call("POST", `/api/v1/sites/${c.siteId}/subscribers/${sid}/reactivate`);
    expect(re.status).toBe(200);
    expect(re.body.subscriber.status).toBe("active");
    expect((await subscriber(c.siteId, bad)).status).toBe("active");
    const other = await call("POST", `/api/v1/sites/${c.siteId}/subscribers/${uniq()}/reactivate`);
    expect(other.status).toBe(404);
  });
});

describe("inbound reports", () => {
  test("5.7.26 changes no subscriber and counts as refusedByPolicy; one 5.2.2 leaves the address active, three soft bounces in 30 days bounce it; a forged tag changes nothing", async () => {
    const [gmail, full] = [`gm-${uniq()}@example.com`, `full-${uniq()}@example.com`];
    const c = await campaign([gmail, full]);
    const ctx = senderProcess();
    for (const e of [gmail, full]) expect(await outcome(deliver(ctx, c.ids[e]!))).toBe("ok");
    const [mg] = mailsTo(c.subject, gmail);
    const [mf] = mailsTo(c.subject, full);

    const policy = await inbound(
      dsn(mg!, "5.7.26", "550-5.7.26 Unauthenticated email from news.example.test is not accepted"),
    );
    expect(policy).toMatchObject({ status: 202, body: { status: "5.7.26", kind: "policy", changed: 0 } });
    expect((await subscriber(c.siteId, gmail)).status).toBe("active");
    const read = await call("GET", `/api/v1/sites/${c.siteId}/campaigns/${c.cid}`);
    expect(read.body.campaign.counts).toMatchObject({ sent: 2, bounced: 0, refusedByPolicy: 1 });

    // A forged tag: nothing recorded.
    const forgedFrom = mf!.from.replace(/\.[0-9a-f]{12}@/, ".000000000000@");
    const forged = await inbound(
      dsn({ ...mf!, from: forgedFrom, raw: Buffer.from("Subject: x\r\n\r\n") }, "5.2.2", "552 5.2.2 full"),
    );
    expect(forged).toMatchObject({ status: 202, body: { changed: 0 } });

    const first = await inbound(dsn(mf!, "5.2.2", "552-5.2.2 The recipient's inbox is out of storage space"));
    expect(first).toMatchObject({
      status: 202,
      body: { status: "5.2.2", kind: "soft", action: "none", changed: 0 },
    });
    expect((await subscriber(c.siteId, full)).status).toBe("active");
    const second = await inbound(dsn(mf!, "4.2.2", "452 4.2.2 Mailbox full"));
    expect(second.body).toMatchObject({ kind: "soft", changed: 0 });
    expect((await subscriber(c.siteId, full)).status).toBe("active");
    const third = await inbound(dsn(mf!, "4.4.7", "Delivery expired"));
    expect(third.body).toMatchObject({ kind: "soft", action: "bounced", changed: 1 });
    expect((await subscriber(c.siteId, full)).status).toBe("bounced");

    const log = await call(
      "GET",
      `/api/v1/sites/${c.siteId}/subscribers/${await subscriberId(c.siteId, full)}`,
    );
    expect(log.body.subscriber.bounces.map((b: any) => [b.status, b.kind])).toEqual([
      ["4.4.7", "soft"],
      ["4.2.2", "soft"],
      ["5.2.2", "soft"],
    ]);
    const gm = await call(
      "GET",
      `/api/v1/sites/${c.siteId}/subscribers/${await subscriberId(c.siteId, gmail)}`,
    );
    expect(gm.body.subscriber.bounces).toEqual([
      expect.objectContaining({ status: "5.7.26", kind: "policy" }),
    ]);
  });

  test("soft bounces older than 30 days do not count; after reactivate the earlier ones do not count either", async () => {
    const email = `old-${uniq()}@example.com`;
    const c = await campaign([email]);
    const sid = await subscriberId(c.siteId, email);
    const at = (daysAgo: number) => ({
      ...h.ctx,
      clock: { now: () => new Date(Date.now() - daysAgo * 86_400_000) },
    });
    const soft = (daysAgo: number) =>
      recordBounce(at(daysAgo), {
        subscriberId: sid,
        campaignId: c.cid,
        status: "4.2.2",
        kind: "soft",
        diagnostic: "452 4.2.2 mailbox full",
      });
    expect(await soft(45)).toBe(false);
    expect(await soft(40)).toBe(false);
    expect(await soft(1)).toBe(false);
    expect((await subscriber(c.siteId, email)).status).toBe("active");
    expect(await soft(0)).toBe(false);
    expect(await soft(0)).toBe(true);
    expect((await subscriber(c.siteId, email)).status).toBe("bounced");
    expect((await call("POST", `/api/v1/sites/${c.siteId}/subscribers/${sid}/reactivate`)).status).toBe(200);
    expect(await soft(0)).toBe(false);
    expect((await subscriber(c.siteId, email)).status).toBe("active");
  });

  test("a message with too many MIME parts answers 400, not 500", async () => {
    const b = "many";
    const parts = Array.from(
      { length: 20_000 },
      (_, i) => `--${b}\r\nContent-Type: text/plain\r\n\r\n${i}\r\n`,
    ).join("");
    const raw = `MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="${b}"\r\n\r\n${parts}--${b}--\r\n`;
    const res = await inbound(raw);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
  });
});
