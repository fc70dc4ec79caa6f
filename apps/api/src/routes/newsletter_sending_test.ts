import { describe, expect, test } from "bun:test";
import {
  campaign,
  campaignRow,
  DEFERRED,
  DEFERRED_ONCE,
  deliver,
  h,
  leaseRanOut,
  mailsTo,
  outcome,
  REFUSED,
  row,
  senderProcess,
  sink,
  subscriber,
  uniq,
  useSendingBed,
  waitFor,
} from "../../testing/newsletter_sending_bed.ts";

// The sending rules of libs/domain/newsletters/sending.ts (decisions 1102, 1103, 1110), one delivery
// at a time: deliverToRecipient against a real smtp-server on 127.0.0.1 and a real PostgreSQL, for
// each way the server can answer. The campaign steps (body cache, pause, fan-out, sweep, pacer) are in
// newsletter_campaign_steps_test.ts. The queue's consumer is not started: each test calls the step it states.

useSendingBed();

describe("one delivery, for each answer of the SMTP server", () => {
  test("delivered: the row is sent (lease cleared, one try), the mail carries the campaign, its row's Message-ID, envelope tag and unsubscribe link; the campaign ends sent with its last row", async () => {
    const [a, b] = [`a-${uniq()}@example.com`, `b-${uniq()}@example.com`];
    const c = await campaign([a, b]);
    const ctx = senderProcess();
    expect(await outcome(deliver(ctx, c.ids[a]!))).toBe("ok");
    expect(await row(c.cid, a)).toMatchObject({ status: "sent", tries: 1, leased: false, sent: true });
    expect((await campaignRow(c.cid)).status).toBe("sending");
    const [mail] = mailsTo(c.subject, a);
    expect(mailsTo(c.subject, a)).toHaveLength(1);
    expect(mail!.parsed!.from!.value[0]).toMatchObject({ name: "Garden Club" });
    expect(String(mail!.parsed!.text)).toContain("Hello from the garden");
    expect(String(mail!.parsed!.html)).toContain("The preheader");
    expect(mail!.parsed!.messageId).toStartWith(`<${c.cid}.${c.ids[a]}@`);
    expect(mail!.from).toStartWith(`bounces+r${c.ids[a]!.replaceAll("-", "")}.`);
    const line = mail!.parsed!.headerLines.find((l) => l.key === "list-unsubscribe")!.line;
    const unsubscribe = line
      .slice(line.indexOf(":") + 1)
      .replace(/\r?\n\s+/g, " ")
      .trim();
    expect(unsubscribe).toStartWith("<https://news.example.test/api/v1/public/newsletter/unsubscribe?token=");
    // The link unsubscribes this row's subscriber.
    const target = new URL(unsubscribe.slice(1, -1));
    const one = await h.call("POST", `${target.pathname}${target.search}`, {
      body: "List-Unsubscribe=One-Click",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(one.status).toBe(200);
    expect((await subscriber(c.siteId, a)).status).toBe("unsubscribed");
    expect(await outcome(deliver(ctx, c.ids[b]!))).toBe("ok");
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true });
  });

  test("a 5xx to RCPT TO bounces that row and its subscriber at once, without a retry, and no one else; the campaign ends with its last row", async () => {
    const fine = `fine-${uniq()}@example.com`;
    const c = await campaign([REFUSED, fine]);
    const ctx = senderProcess();
    expect(await outcome(deliver(ctx, c.ids[REFUSED]!))).toBe("ok");
    const r = await row(c.cid, REFUSED);
    expect(r).toMatchObject({ status: "bounced", tries: 1, leased: false, sent: false });
    expect(r.last_error).toContain("550 5.1.1 mailbox unavailable");
    expect(await subscriber(c.siteId, REFUSED)).toEqual({ status: "bounced", bounced_at: true });
    expect(await subscriber(c.siteId, fine)).toEqual({ status: "active", bounced_at: false });
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sending", error: null });
    expect(await outcome(deliver(ctx, c.ids[fine]!))).toBe("ok");
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true, error: null });
    expect(mailsTo(c.subject, REFUSED)).toEqual([]);
    expect(mailsTo(c.subject, fine)).toHaveLength(1);
  });

  test("a 4xx to RCPT TO before the last try: the row waits in line again and the try fails (the queue retries it); nobody bounces", async () => {
    const c = await campaign([DEFERRED]);
    // Try 4 of 5 is not the last.
    expect(await outcome(deliver(senderProcess(), c.ids[DEFERRED]!, 4, 5))).toBe(
      "MailSendError transient 451",
    );
    const r = await row(c.cid, DEFERRED);
    expect(r).toMatchObject({ status: "queued", tries: 1, leased: false, sent: false });
    expect(r.last_error).toContain("451 4.3.0 try again later");
    expect((await subscriber(c.siteId, DEFERRED)).status).toBe("active");
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sending", error: null });
  });

  test("a 4xx to RCPT TO on the last try ends the row failed (a deferred mailbox, not a bounce) and the campaign with it", async () => {
    const c = await campaign([DEFERRED]);
    expect(await outcome(deliver(senderProcess(), c.ids[DEFERRED]!, 5, 5))).toBe(
      "PermanentJobError: gave up after 5 tries: 451 4.3.0 try again later",
    );
    const r = await row(c.cid, DEFERRED);
    expect(r).toMatchObject({ status: "failed", tries: 1, leased: false });
    expect(r.last_error).toContain("451 4.3.0 try again later");
    expect((await subscriber(c.siteId, DEFERRED)).status).toBe("active");
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true });
  });

  test("a relay refusing the sender (5xx to MAIL FROM) on the first try pauses the campaign with the reply: the row waits, nobody bounces, no retry, and no other row is taken while paused", async () => {
    const [a, b] = [`mf1-${uniq()}@example.com`, `mf2-${uniq()}@example.com`];
    const c = await campaign([a, b]);
    const ctx = senderProcess();
    sink.refuseMailFrom = "550 5.7.1 Sender address rejected: not owned by user";
    try {
      expect(await outcome(deliver(ctx, c.ids[a]!))).toBe("ok");
    } finally {
      sink.refuseMailFrom = null;
    }
    expect(await row(c.cid, a)).toMatchObject({ status: "queued", tries: 1, leased: false });
    expect((await row(c.cid, a)).last_error).toContain("5.7.1 Sender address rejected");
    const paused = await campaignRow(c.cid);
    expect(paused.status).toBe("paused");
    expect(paused.error).toStartWith(
      "The mail server refused the sender address (MAIL FROM): 550 5.7.1 Sender address rejected: not owned by user.",
    );
    expect((await subscriber(c.siteId, a)).status).toBe("active");
    // The relay works again, but the campaign is paused: the next row is not claimed.
    expect(await outcome(deliver(ctx, c.ids[b]!))).toBe("ok");
    expect(await row(c.cid, b)).toMatchObject({ status: "queued", tries: 0, leased: false });
    expect(mailsTo(c.subject, a).concat(mailsTo(c.subject, b))).toEqual([]);
  });

  test("a 4xx to MAIL FROM is retried, and on the last try pauses the campaign (the relay, not the recipient), naming the tries; a long reply is kept to 1000 characters on the row, 500 in the reason", async () => {
    const email = `mf4-${uniq()}@example.com`;
    const c = await campaign([email]);
    const ctx = senderProcess();
    const reply = `451 4.3.2 System not accepting network messages ${"z".repeat(1200)}`;
    sink.refuseMailFrom = reply;
    try {
      expect(await outcome(deliver(ctx, c.ids[email]!, 1, 5))).toBe("MailSendError transient 451");
      expect(await row(c.cid, email)).toMatchObject({ status: "queued", tries: 1 });
      expect((await campaignRow(c.cid)).status).toBe("sending");
      expect(await outcome(deliver(ctx, c.ids[email]!, 5, 5))).toBe("ok");
    } finally {
      sink.refuseMailFrom = null;
    }
    expect(await row(c.cid, email)).toMatchObject({ status: "queued", tries: 2, leased: false });
    expect((await row(c.cid, email)).last_error).toBe(reply.slice(0, 1000));
    const paused = await campaignRow(c.cid);
    expect(paused.status).toBe("paused");
    expect(paused.error).toBe(
      `The mail server kept failing after 5 tries (${reply.slice(0, 500)}); sending is paused: check the relay, then resume.`,
    );
    expect((await subscriber(c.siteId, email)).status).toBe("active");
  });

  test("the message refused after the end of DATA (5xx): the row, already committed as sent, waits in line again; the campaign pauses; nothing delivered, nobody bounced", async () => {
    const email = `dmarc-${uniq()}@example.com`;
    const c = await campaign([email]);
    sink.refuseData = "550 5.7.26 Unauthenticated email is not accepted (DMARC)";
    try {
      expect(await outcome(deliver(senderProcess(), c.ids[email]!))).toBe("ok");
    } finally {
      sink.refuseData = null;
    }
    const r = await row(c.cid, email);
    expect(r).toMatchObject({ status: "queued", tries: 1, leased: false });
    expect(r.last_error).toContain("5.7.26");
    const paused = await campaignRow(c.cid);
    expect(paused.status).toBe("paused");
    expect(paused.error).toStartWith("The mail server refused the message: 550 5.7.26 Unauthenticated email");
    expect((await subscriber(c.siteId, email)).status).toBe("active");
    expect(mailsTo(c.subject, email)).toEqual([]);
  });

  test("a 4xx to the end of DATA: the row committed as sent waits in line again and the try fails", async () => {
    const email = `data4-${uniq()}@example.com`;
    const c = await campaign([email]);
    sink.refuseData = "451 4.7.1 Please try again later";
    try {
      expect(await outcome(deliver(senderProcess(), c.ids[email]!))).toBe("MailSendError transient 451");
    } finally {
      sink.refuseData = null;
    }
    expect(await row(c.cid, email)).toMatchObject({ status: "queued", tries: 1, leased: false });
    expect((await campaignRow(c.cid)).status).toBe("sending");
    expect(mailsTo(c.subject, email)).toEqual([]);
  });

  test("a subscriber who unsubscribed after the send started is skipped, never mailed; the campaign ends", async () => {
    const email = `gone-${uniq()}@example.com`;
    const c = await campaign([email]);
    await h.sql`update newsletter_subscribers set status = 'unsubscribed'
      where site_id = ${c.siteId}::uuid and email = ${email}`;
    expect(await outcome(deliver(senderProcess(), c.ids[email]!))).toBe("ok");
    expect(await row(c.cid, email)).toMatchObject({
      status: "skipped",
      tries: 1,
      leased: false,
      sent: false,
    });
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true });
    expect(mailsTo(c.subject, email)).toEqual([]);
  });

  test("a mail that cannot be composed (a DKIM key that cannot sign) fails its row for good, unsent; the campaign ends", async () => {
    const email = `dkim-${uniq()}@example.com`;
    const c = await campaign([email]);
    const ctx = senderProcess({
      newsletter: {
        dkim: {
          domain: "news.example.test",
          keys: [{ selector: "s1", privateKey: "not a key", keyType: "rsa" }],
        },
      },
    });
    expect(await outcome(deliver(ctx, c.ids[email]!))).toBe(
      "PermanentJobError: the mail could not be composed",
    );
    const r = await row(c.cid, email);
    expect(r).toMatchObject({ status: "failed", tries: 1, leased: false, sent: false });
    expect(r.last_error).toContain("DKIM signing failed");
    expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true });
    expect(mailsTo(c.subject, email)).toEqual([]);
  });

  for (const [which, attempt, ended] of [
    ["first", 1, "MailSendError transient 451"],
    ["last", 5, "PermanentJobError: gave up after 5 tries: 451 4.3.0 try again later"],
  ] as const) {
    test(`a claim lost while the server held its envelope: its 4xx on the ${which} try leaves the row to the live claim (settle only while our claim holds), which mails it once`, async () => {
      const email = DEFERRED_ONCE[which];
      const c = await campaign([email]);
      const rid = c.ids[email]!;
      const first = senderProcess();
      const second = senderProcess({ leaseMs: 60_000 });
      // The first session is held, then answered 451 (the address defers once); the second passes.
      let session = 0;
      let letFirstGo!: () => void;
      let letSecondGo!: () => void;
      const gates = [new Promise<void>((r) => (letFirstGo = r)), new Promise<void>((r) => (letSecondGo = r))];
      const held: number[] = [];
      sink.holdRcpt = async (address) => {
        if (address !== email) return;
        const n = session++;
        held.push(n);
        await gates[n];
      };
      try {
        const firstRun = outcome(deliver(first, rid, attempt, 5));
        await waitFor("the first envelope on the server", () => held.length === 1);
        await waitFor("the first claim's lease to run out", () => leaseRanOut(rid));
        const secondRun = outcome(deliver(second, rid));
        await waitFor("the second envelope on the server", () => held.length === 2);
        letFirstGo();
        expect(await firstRun).toBe(ended);
        // The row is still the live claim's: neither put back in line nor ended by the process that lost it.
        expect(await row(c.cid, email)).toMatchObject({ status: "sending", tries: 2, leased: true });
        letSecondGo();
        expect(await secondRun).toBe("ok");
      } finally {
        sink.holdRcpt = null;
        letFirstGo();
        letSecondGo();
      }
      expect(await row(c.cid, email)).toMatchObject({ status: "sent", tries: 2 });
      expect(mailsTo(c.subject, email)).toHaveLength(1);
    });
  }

  test("a claim lost while waiting for an SMTP connection, then refused by the relay: the campaign pauses, but the row stays the live claim's, which mails it once", async () => {
    const blocker = `blocker-${uniq()}@example.com`;
    const email = `waiting-${uniq()}@example.com`;
    const other = await campaign([blocker]);
    const c = await campaign([email]);
    const rid = c.ids[email]!;
    // The first process has one SMTP connection, taken by a delivery the server holds at RCPT TO.
    const first = senderProcess({ connections: 1 });
    const second = senderProcess({ leaseMs: 60_000 });
    const held: string[] = [];
    const gates = new Map<string, () => void>();
    const open = (address: string) => gates.get(address)?.();
    sink.holdRcpt = async (address) => {
      if (address !== blocker && address !== email) return;
      held.push(address);
      await new Promise<void>((r) => gates.set(address, r));
    };
    try {
      const blockerRun = outcome(deliver(first, other.ids[blocker]!));
      await waitFor("the blocker's envelope on the server", () => held.includes(blocker));
      // The row is claimed; its mail waits for the connection while the lease runs out.
      const firstRun = outcome(deliver(first, rid));
      await waitFor("the first claim's lease to run out", () => leaseRanOut(rid));
      const secondRun = outcome(deliver(second, rid));
      await waitFor("the live claim's envelope on the server", () => held.includes(email));
      sink.refuseMailFrom = "550 5.7.1 Sender address rejected";
      open(blocker);
      expect(await blockerRun).toBe("ok");
      expect(await firstRun).toBe("ok");
      expect(await campaignRow(c.cid)).toMatchObject({ status: "paused" });
      expect(await row(c.cid, email)).toMatchObject({ status: "sending", tries: 2, leased: true });
      sink.refuseMailFrom = null;
      open(email);
      expect(await secondRun).toBe("ok");
    } finally {
      sink.holdRcpt = null;
      sink.refuseMailFrom = null;
      for (const go of gates.values()) go();
    }
    expect(await row(c.cid, email)).toMatchObject({ status: "sent", tries: 2 });
    expect(mailsTo(c.subject, email)).toHaveLength(1);
  });

  test("the connection drops mid-DATA while the row is being marked sent: the mark, never committed, is rolled back; the row waits in line again and nothing is delivered", async () => {
    const email = `drop-${uniq()}@example.com`;
    const probe = `probe-${uniq()}@example.com`;
    const c = await campaign([email]);
    const p = await campaign([probe]);
    const rid = c.ids[email]!;
    // One SMTP connection: a second delivery gets one only once the first let its broken one go.
    const ctx = senderProcess({ connections: 1 });
    const seen: string[] = [];
    const gates = new Map<string, () => void>();
    const open = (address: string) => gates.get(address)?.();
    sink.holdRcpt = async (address) => {
      seen.push(address);
      if (address === email || address === probe) await new Promise<void>((r) => gates.set(address, r));
    };
    let run!: Promise<string>;
    let probeRun!: Promise<string>;
    try {
      run = outcome(deliver(ctx, rid));
      await waitFor("the envelope on the server", () => gates.has(email));
      // The test holds the row: the mark (UPDATE … set status = 'sent') waits for it.
      await h.sql.begin(async (tx) => {
        await tx`select id from newsletter_recipients where id = ${rid}::uuid for update`;
        probeRun = outcome(deliver(ctx, p.ids[probe]!));
        sink.dropInData = true;
        open(email);
        await waitFor("the broken connection let go: the next delivery on the server", () =>
          gates.has(probe),
        );
        sink.dropInData = false;
      });
      expect(await run).toBe("MailSendError transient null");
      open(probe);
      expect(await probeRun).toBe("ok");
    } finally {
      sink.holdRcpt = null;
      sink.dropInData = false;
      for (const go of gates.values()) go();
    }
    expect(await row(c.cid, email)).toMatchObject({ status: "queued", tries: 1, leased: false, sent: false });
    expect(mailsTo(c.subject, email)).toEqual([]);
    expect(mailsTo(p.subject, probe)).toHaveLength(1);
  });
});
