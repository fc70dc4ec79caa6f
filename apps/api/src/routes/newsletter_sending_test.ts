import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { addLibraryFile } from "@site/domain/media";
import {
  createPacer,
  createSmtpMailer,
  deliverToRecipient,
  fanOutCampaign,
  type Mailer,
  MailSendError,
  pauseCampaign,
  pauseReason,
  type QueueContext,
  type SenderContext,
  sweepNewsletters,
} from "@site/domain/newsletters";
import { type SmtpSink, sampleImage, startSmtpSink } from "@site/domain/testing";
import { createMemoryQueue, type JobQueue, PermanentJobError } from "@site/queue";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// The sending rules of libs/domain/newsletters/sending.ts (decisions 1102, 1103, 1110), one delivery
// at a time: deliverToRecipient against a real smtp-server on 127.0.0.1 and a real PostgreSQL, for
// each way the server can answer; the pause, the fan-out and the sweep on their own; the pause's
// sentences and the pacer. The queue's consumer is not started: each test calls the step it states.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);
const LEASE_MS = 1000;
/** Answered 451 to RCPT TO on every try. */
const DEFERRED = "always-later@example.org";
/** Answered 451 to RCPT TO once (the settle-guard races below: on a first try, and on the last). */
const DEFERRED_ONCE = { first: "once-later-1@example.org", last: "once-later-5@example.org" };
/** Answered 550 to RCPT TO. */
const REFUSED = "no-such-user@example.org";

let h: TestApp;
let sink: SmtpSink;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
const mailers: Mailer[] = [];
/** The app's warnings and errors, as JSON lines. */
const logLines: string[] = [];

beforeAll(async () => {
  sink = await startSmtpSink({
    reject: [REFUSED],
    defer: { [DEFERRED]: 1_000_000, [DEFERRED_ONCE.first]: 1, [DEFERRED_ONCE.last]: 1 },
  });
  h = await buildTestApp({
    env: {
      SMTP_URL: sink.url,
      SMTP_RATE_PER_MINUTE: "0",
      NEWSLETTER_LEASE_MS: String(LEASE_MS),
      PUBLIC_BASE_URL: "https://news.example.test",
      MAIL_BOUNCE_ADDRESS: "bounces@news.example.test",
      FETCH_ALLOW_HOSTS: "127.0.0.1:9",
    },
    log: createLogger("warn", {}, { sink: (line) => logLines.push(line) }),
  });
  owner = await h.seedOrg({
    siteLimit: 50,
    scopes: ["content:read", "content:write", "sites:write", "webhooks:write"],
  });
  // Every newsletter.campaign.paused of the organization is recorded in the webhook outbox.
  const hook = await h.call("POST", "/api/v1/webhooks", {
    key: owner.key,
    body: { url: "http://127.0.0.1:9/paused", events: ["newsletter.campaign.paused"] },
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  for (const m of mailers) await m.close();
  await h.close();
  await sink.close();
});

/** A sending process: its own SMTP connections, no pace, its own rendered bodies. */
function senderProcess(
  over: { leaseMs?: number; connections?: number; newsletter?: Record<string, unknown> } = {},
): SenderContext {
  const mailer = createSmtpMailer(sink.url, {
    connections: over.connections ?? 4,
    log: createLogger("silent" as never),
  });
  mailers.push(mailer);
  const newsletter = { ...h.ctx.config.newsletter, leaseMs: over.leaseMs ?? LEASE_MS, ...over.newsletter };
  const config = { ...h.ctx.config, newsletter };
  return { ...h.ctx, config, mailer, pace: async () => {}, bodies: new Map() };
}

const deliver = (ctx: SenderContext, recipientId: string, attempt = 1, attempts = 5) =>
  deliverToRecipient(ctx, { data: { recipientId }, attempt, attempts });

/** How a delivery ended: "ok", or the error it threw (its class, kind and message). */
const outcome = (p: Promise<void>) =>
  p.then(
    () => "ok",
    (e) =>
      e instanceof MailSendError
        ? `MailSendError ${e.kind} ${e.responseCode}`
        : `${e instanceof PermanentJobError ? "PermanentJobError" : e?.constructor?.name}: ${e.message}`,
  );

const call = async (method: string, path: string, body?: unknown) => {
  const res = await h.call(method, path, { key: owner.key, body });
  return { status: res.status, body: (await res.json().catch(() => null)) as Json };
};

/** A site with these subscribers and a campaign; sent now unless `send` is false. */
async function campaign(
  emails: string[],
  opts: { send?: boolean | string; html?: (siteId: string) => Promise<string> } = {},
) {
  const site = await call("POST", "/api/v1/sites", { name: "Rules News", slug: `r-${uniq()}` });
  const siteId = site.body.site.id as string;
  if (emails.length > 0) {
    const added = await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      subscribers: emails.map((email) => ({ email })),
    });
    expect(added.status).toBe(200);
  }
  const subject = `Rules ${uniq()}`;
  const c = await call("POST", `/api/v1/sites/${siteId}/campaigns`, {
    subject,
    preheader: "The preheader",
    fromName: "Garden Club",
    html: opts.html ? await opts.html(siteId) : "<p>Hello from the garden</p>",
  });
  const cid = c.body.campaign.id as string;
  if (opts.send !== false) {
    const body = typeof opts.send === "string" ? { sendAt: opts.send } : undefined;
    const sent = await call("POST", `/api/v1/sites/${siteId}/campaigns/${cid}/send`, body);
    expect(sent.status).toBe(202);
  }
  const rows = await recipients(cid);
  return { siteId, cid, subject, ids: Object.fromEntries(rows.map((r) => [r.email, r.id])) };
}

type Row = {
  id: string;
  email: string;
  status: string;
  tries: number;
  leased: boolean;
  last_error: string | null;
  sent: boolean;
};
const recipients = async (cid: string) =>
  (await h.sql`
    select id, email, status, tries, lease_until is not null as leased, last_error, sent_at is not null as sent
    from newsletter_recipients where campaign_id = ${cid}::uuid order by email`) as unknown as Row[];
const row = async (cid: string, email: string) => (await recipients(cid)).find((r) => r.email === email)!;
const leaseRanOut = async (rid: string) => {
  const [x] =
    await h.sql`select lease_until < now() as out from newsletter_recipients where id = ${rid}::uuid`;
  return x?.out === true;
};
const campaignRow = async (cid: string) =>
  (
    await h.sql`select status, error, finished_at is not null as finished, runs,
      fanned_out_at is not null and fanned_out_at > now() - interval '1 minute' as fanned_now
      from newsletter_campaigns where id = ${cid}::uuid`
  )[0] as { status: string; error: string | null; finished: boolean; runs: number; fanned_now: boolean };
const subscriber = async (siteId: string, email: string) =>
  (
    await h.sql`select status, bounced_at is not null as bounced_at from newsletter_subscribers
      where site_id = ${siteId}::uuid and email = ${email}`
  )[0] as { status: string; bounced_at: boolean };
const mailsTo = (subject: string, email: string) =>
  sink.messages.filter((m) => m.parsed?.subject === subject && m.to.includes(email));
const pausedEvents = async (cid: string) =>
  (await h.sql`select data from webhook_events
    where type = 'newsletter.campaign.paused' and data->>'id' = ${cid}`) as unknown as { data: Json }[];

const waitFor = async (what: string, check: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
};

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
        dkim: { domain: "news.example.test", selector: "s1", privateKey: "not a key", keyType: "rsa" },
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

describe("the rendered body: once per campaign and media generation, kept at most a minute and a tenth of the token lifetime", () => {
  const cached = { html: "<p>cached body</p>", text: "cached body" };

  test("a fresh body of the same campaign and generation is used as it is; a stale one is rendered again and stale entries of other campaigns dropped", async () => {
    const [a, b] = [`c1-${uniq()}@example.com`, `c2-${uniq()}@example.com`];
    const c = await campaign([a, b]);
    const ctx = senderProcess();
    const key = `${c.cid}.0`;
    ctx.bodies.set(key, { at: Date.now() - 50_000, body: Promise.resolve(cached) });
    await deliver(ctx, c.ids[a]!);
    expect(String(mailsTo(c.subject, a)[0]!.parsed!.text)).toContain("cached body");
    // Past a minute: rendered again from the campaign; another campaign's stale body is dropped, a fresh one kept.
    ctx.bodies.set(key, { at: Date.now() - 60_500, body: Promise.resolve(cached) });
    ctx.bodies.set("other.0", { at: Date.now() - 61_000, body: Promise.resolve(cached) });
    ctx.bodies.set("fresh.0", { at: Date.now(), body: Promise.resolve(cached) });
    const before = Date.now();
    await deliver(ctx, c.ids[b]!);
    const text = String(mailsTo(c.subject, b)[0]!.parsed!.text);
    expect(text).toContain("Hello from the garden");
    expect(text).not.toContain("cached body");
    expect([...ctx.bodies.keys()].sort()).toEqual(["fresh.0", key].sort());
    expect(ctx.bodies.get(key)!.at).toBeGreaterThanOrEqual(before);
  });

  test("with share tokens living 100 s a body is kept 10 s: 5 s old it is used, 10.5 s old rendered anew; a new media generation is rendered anew", async () => {
    const [a, b, d] = [`t1-${uniq()}@example.com`, `t2-${uniq()}@example.com`, `t3-${uniq()}@example.com`];
    const c = await campaign([a, b, d]);
    const ctx = senderProcess({ newsletter: { mailMediaTtlSeconds: 100 } });
    ctx.bodies.set(`${c.cid}.0`, { at: Date.now() - 5000, body: Promise.resolve(cached) });
    await deliver(ctx, c.ids[a]!);
    expect(String(mailsTo(c.subject, a)[0]!.parsed!.text)).toContain("cached body");
    ctx.bodies.set(`${c.cid}.0`, { at: Date.now() - 10_500, body: Promise.resolve(cached) });
    await deliver(ctx, c.ids[b]!);
    expect(String(mailsTo(c.subject, b)[0]!.parsed!.text)).not.toContain("cached body");
    // After a revoke the generation is 1: a body cached for generation 0 is not used.
    const revoked = await call("POST", `/api/v1/sites/${c.siteId}/campaigns/${c.cid}/revoke-media`);
    expect(revoked.status).toBe(200);
    ctx.bodies.set(`${c.cid}.0`, { at: Date.now(), body: Promise.resolve(cached) });
    await deliver(ctx, c.ids[d]!);
    expect(String(mailsTo(c.subject, d)[0]!.parsed!.text)).not.toContain("cached body");
    expect(ctx.bodies.has(`${c.cid}.1`)).toBe(true);
  });

  test("the mail's images carry the campaign's media token of its current generation", async () => {
    const [a, b] = [`img1-${uniq()}@example.com`, `img2-${uniq()}@example.com`];
    const c = await campaign([a, b], {
      html: async (siteId) => {
        const file = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
        return `<p><img src="/api/media/${file.key}" alt="Seeds"></p>`;
      },
    });
    const ctx = senderProcess();
    const tokenOf = (email: string) => {
      const html = String(mailsTo(c.subject, email)[0]!.parsed!.html);
      const src = /<img[^>]+src="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
      return new URL(src).searchParams.get("t")!.split(".").slice(0, 3);
    };
    await deliver(ctx, c.ids[a]!);
    expect(tokenOf(a)).toEqual(["n", c.cid, "0"]);
    expect((await call("POST", `/api/v1/sites/${c.siteId}/campaigns/${c.cid}/revoke-media`)).status).toBe(
      200,
    );
    await deliver(ctx, c.ids[b]!);
    expect(tokenOf(b)).toEqual(["n", c.cid, "1"]);
  });
});

describe("pauseCampaign", () => {
  test("pauses only a sending campaign, once: the reason stored, one newsletter.campaign.paused event and one warning; again, or a draft or sent campaign: false, unchanged", async () => {
    const c = await campaign([`p-${uniq()}@example.com`]);
    const reason = `The relay is down ${uniq()}`;
    const warned = () =>
      logLines.filter((l) => l.includes("newsletter campaign paused") && l.includes(c.cid));
    expect(await pauseCampaign(h.ctx, c.cid, reason)).toBe(true);
    expect(await campaignRow(c.cid)).toMatchObject({ status: "paused", error: reason });
    const events = await pausedEvents(c.cid);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ id: c.cid, status: "paused", error: reason });
    expect(warned()).toHaveLength(1);
    expect(JSON.parse(warned()[0]!)).toMatchObject({ level: "warn", campaignId: c.cid, reason });
    expect(await pauseCampaign(h.ctx, c.cid, "a second reason")).toBe(false);
    expect(await campaignRow(c.cid)).toMatchObject({ status: "paused", error: reason });
    expect(await pausedEvents(c.cid)).toHaveLength(1);
    expect(warned()).toHaveLength(1);

    const draft = await campaign([`d-${uniq()}@example.com`], { send: false });
    expect(await pauseCampaign(h.ctx, draft.cid, reason)).toBe(false);
    expect(await campaignRow(draft.cid)).toMatchObject({ status: "draft", error: null });
    const sent = await campaign([`s-${uniq()}@example.com`]);
    await h.sql`update newsletter_campaigns set status = 'sent' where id = ${sent.cid}::uuid`;
    expect(await pauseCampaign(h.ctx, sent.cid, reason)).toBe(false);
    expect(await campaignRow(sent.cid)).toMatchObject({ status: "sent", error: null });
    expect(await pausedEvents(draft.cid)).toEqual([]);
    expect(await pausedEvents(sent.cid)).toEqual([]);
  });
});

/** A real in-process queue that also lists what was enqueued on it. */
function recordingQueue() {
  const real = createMemoryQueue({ log: createLogger("silent" as never) });
  const jobs: { name: string; data: Json; jobId: string }[] = [];
  const queue: JobQueue = {
    ...real,
    driver: real.driver,
    enqueue: async (name, data, opts) => {
      jobs.push({ name, data, jobId: opts.jobId });
      await real.enqueue(name, data, opts);
    },
  };
  return { queue, jobs, ctx: { ...h.ctx, queue } as QueueContext };
}

describe("fanOutCampaign", () => {
  test("queues one job per row not yet mailed (queued, or claimed under a lease that ran out), its id the row and its tries; never a live claim, an ended row, or another campaign's row", async () => {
    const emails = ["q0", "q2", "expired", "live", "sent", "failed", "bounced", "skipped"].map(
      (n) => `${n}-${uniq()}@example.com`,
    );
    const c = await campaign(emails);
    const other = await campaign([`other-${uniq()}@example.com`]);
    const id = (prefix: string) => c.ids[emails.find((e) => e.startsWith(`${prefix}-`))!]!;
    await h.sql`update newsletter_recipients set tries = 2 where id = ${id("q2")}::uuid`;
    await h.sql`update newsletter_recipients set status = 'sending', tries = 1,
      lease_until = now() - interval '1 second' where id = ${id("expired")}::uuid`;
    await h.sql`update newsletter_recipients set status = 'sending', tries = 1,
      lease_until = now() + interval '1 minute' where id = ${id("live")}::uuid`;
    for (const s of ["sent", "failed", "bounced", "skipped"])
      await h.sql`update newsletter_recipients set status = ${s}, tries = 1 where id = ${id(s)}::uuid`;
    const q = recordingQueue();
    try {
      await h.sql`update newsletter_campaigns set fanned_out_at = null where id = ${c.cid}::uuid`;
      expect(await fanOutCampaign(q.ctx, c.cid)).toBe(3);
      const expected = [
        { name: "newsletter-delivery", data: { recipientId: id("q0") }, jobId: `${id("q0")}.0` },
        { name: "newsletter-delivery", data: { recipientId: id("q2") }, jobId: `${id("q2")}.2` },
        { name: "newsletter-delivery", data: { recipientId: id("expired") }, jobId: `${id("expired")}.1` },
      ];
      const byId = (x: { jobId: string }, y: { jobId: string }) => x.jobId.localeCompare(y.jobId);
      expect([...q.jobs].sort(byId)).toEqual(expected.sort(byId));
      expect(await campaignRow(c.cid)).toMatchObject({ status: "sending", fanned_now: true });
      expect((await recipients(other.cid)).map((r) => r.status)).toEqual(["queued"]);

      // After a pause and a resume the job ids name the run: the paused run's jobs may still be kept.
      expect(await pauseCampaign(h.ctx, c.cid, "relay down")).toBe(true);
      q.jobs.length = 0;
      expect(await fanOutCampaign(q.ctx, c.cid)).toBe(0);
      expect(q.jobs).toEqual([]);
      expect((await call("POST", `/api/v1/sites/${c.siteId}/campaigns/${c.cid}/resume`)).status).toBe(202);
      expect((await campaignRow(c.cid)).runs).toBe(1);
      expect(await fanOutCampaign(q.ctx, c.cid)).toBe(3);
      expect(q.jobs.map((j) => j.jobId).sort()).toEqual(
        [`${id("q0")}.0.r1`, `${id("q2")}.2.r1`, `${id("expired")}.1.r1`].sort(),
      );
    } finally {
      await q.queue.close();
    }
  });

  test("a campaign of 150 rows is queued in batches: each row once", async () => {
    const c = await campaign(Array.from({ length: 150 }, (_, i) => `many${i}-${uniq()}@example.com`));
    const q = recordingQueue();
    try {
      expect(await fanOutCampaign(q.ctx, c.cid)).toBe(150);
      expect(q.jobs).toHaveLength(150);
      expect(new Set(q.jobs.map((j) => j.jobId))).toEqual(
        new Set(Object.values(c.ids).map((id) => `${id}.0`)),
      );
    } finally {
      await q.queue.close();
    }
  });

  test("a sending campaign with no row left to mail ends sent; a draft or an unknown campaign queues nothing", async () => {
    const email = `done-${uniq()}@example.com`;
    const c = await campaign([email]);
    await h.sql`update newsletter_recipients set status = 'sent', tries = 1 where campaign_id = ${c.cid}::uuid`;
    const q = recordingQueue();
    try {
      expect(await fanOutCampaign(q.ctx, c.cid)).toBe(0);
      expect(await campaignRow(c.cid)).toMatchObject({ status: "sent", finished: true });
      const draft = await campaign([`dr-${uniq()}@example.com`], { send: false });
      expect(await fanOutCampaign(q.ctx, draft.cid)).toBe(0);
      expect((await campaignRow(draft.cid)).status).toBe("draft");
      expect(await fanOutCampaign(q.ctx, crypto.randomUUID())).toBe(0);
      expect(q.jobs).toEqual([]);
    } finally {
      await q.queue.close();
    }
  });
});

describe("sweepNewsletters", () => {
  test("starts the scheduled campaigns due by the clock (send_at reached, to the millisecond), and queues the send job again for sending campaigns whose last fan-out is older than the lease", async () => {
    // Only this test's campaigns are in play: the others of this database are set aside.
    await h.sql`update newsletter_campaigns set status = 'cancelled' where status in ('sending', 'scheduled')`;
    const sendAt = new Date(Date.now() + 3_600_000);
    const due = await campaign([`due-${uniq()}@example.com`], { send: sendAt.toISOString() });
    const later = await campaign([`later-${uniq()}@example.com`], {
      send: new Date(sendAt.getTime() + 1).toISOString(),
    });
    expect((await campaignRow(due.cid)).status).toBe("scheduled");
    const never = await campaign([`nf-${uniq()}@example.com`]);
    const old = await campaign([`old-${uniq()}@example.com`]);
    const recent = await campaign([`recent-${uniq()}@example.com`]);
    const paused = await campaign([`pz-${uniq()}@example.com`]);
    await h.sql`update newsletter_campaigns set fanned_out_at = null where id = ${never.cid}::uuid`;
    await h.sql`update newsletter_campaigns set fanned_out_at = now() - interval '90 seconds' where id in (${old.cid}::uuid, ${paused.cid}::uuid)`;
    await h.sql`update newsletter_campaigns set fanned_out_at = now() - interval '30 seconds' where id = ${recent.cid}::uuid`;
    expect(await pauseCampaign(h.ctx, paused.cid, "relay down")).toBe(true);
    const q = recordingQueue();
    const config = { ...h.ctx.config, newsletter: { ...h.ctx.config.newsletter, leaseMs: 60_000 } };
    try {
      const result = await sweepNewsletters({ ...q.ctx, config, clock: { now: () => sendAt } });
      // The campaign started now has not been fanned out yet: it is queued as started and as stalled.
      expect(result).toEqual({ started: 1, resumed: 3 });
      expect((await campaignRow(due.cid)).status).toBe("sending");
      expect((await recipients(due.cid)).map((r) => r.status)).toEqual(["queued"]);
      expect((await campaignRow(later.cid)).status).toBe("scheduled");
      expect(q.jobs.every((j) => j.name === "newsletter-campaign")).toBe(true);
      expect(q.jobs.map((j) => j.data.campaignId).sort()).toEqual(
        [due.cid, due.cid, never.cid, old.cid].sort(),
      );
    } finally {
      await q.queue.close();
    }
  });

  test("a due campaign cancelled while the sweep waits to start it is not started and queues nothing (the sweep lost the race)", async () => {
    await h.sql`update newsletter_campaigns set status = 'cancelled' where status in ('sending', 'scheduled')`;
    const sendAt = new Date(Date.now() + 3_600_000);
    const c = await campaign([`race-${uniq()}@example.com`], { send: sendAt.toISOString() });
    const q = recordingQueue();
    try {
      let sweeping!: Promise<{ started: number; resumed: number }>;
      // The cancel holds the campaign's row; the sweep, which read the campaign as due, waits for it.
      await h.sql.begin(async (tx) => {
        await tx`update newsletter_campaigns set status = 'cancelled' where id = ${c.cid}::uuid`;
        sweeping = sweepNewsletters({ ...q.ctx, clock: { now: () => sendAt } });
        await waitFor("the sweep to wait for the campaign's row", async () => {
          const [w] = await h.sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`;
          return w?.n === 1;
        });
      });
      expect(await sweeping).toEqual({ started: 0, resumed: 0 });
      expect(q.jobs).toEqual([]);
      expect(await campaignRow(c.cid)).toMatchObject({ status: "cancelled" });
      expect(await recipients(c.cid)).toEqual([]);
    } finally {
      await q.queue.close();
    }
  });
});

describe("pauseReason: the sentence a paused campaign shows", () => {
  const err = (message: string, kind: "relay" | "transient", command: string | null, committed = false) =>
    new MailSendError(message, kind, 550, committed, { command });

  test("each refusal names what was refused, quotes the reply on one line, and says what to check", () => {
    expect(pauseReason(err("  451 4.3.0\r\n  try   later ", "transient", "RCPT TO"), 5)).toBe(
      "The mail server kept failing after 5 tries (451 4.3.0 try later); sending is paused: check the relay, then resume.",
    );
    // A transient failure at any command reads as the relay failing, not as what it refused.
    expect(pauseReason(err("421 busy", "transient", "AUTH PLAIN"), 3)).toBe(
      "The mail server kept failing after 3 tries (421 busy); sending is paused: check the relay, then resume.",
    );
    expect(pauseReason(err("535 5.7.8 bad credentials", "relay", "auth login"), 1)).toBe(
      "The mail server refused the login (AUTH LOGIN): 535 5.7.8 bad credentials. Check SMTP_URL's user and password, then resume.",
    );
    expect(pauseReason(err("550 5.7.1 not yours", "relay", "MAIL FROM"), 1)).toBe(
      "The mail server refused the sender address (MAIL FROM): 550 5.7.1 not yours. Check MAIL_BOUNCE_ADDRESS / MAIL_FROM and what the relay lets this service send as, then resume.",
    );
    const refused =
      "The mail server refused the message: 554 5.7.26 DMARC. Check DKIM, SPF and DMARC for the sender's domain, then resume.";
    expect(pauseReason(err("554 5.7.26 DMARC", "relay", "DATA"), 1)).toBe(refused);
    expect(pauseReason(err("554 5.7.26 DMARC", "relay", null, true), 1)).toBe(refused);
    const unusable = (reply: string) =>
      `The mail server could not be used: ${reply}. Check SMTP_URL and the relay, then resume.`;
    expect(pauseReason(err("certificate has expired", "relay", null), 1)).toBe(
      unusable("certificate has expired"),
    );
    expect(pauseReason(err("530 5.7.0 Must issue STARTTLS", "relay", "EHLO"), 1)).toBe(
      unusable("530 5.7.0 Must issue STARTTLS"),
    );
  });

  test("the reply is cut to 500 characters", () => {
    const reply = `550 ${"x".repeat(600)}`;
    expect(pauseReason(err(reply, "relay", "EHLO"), 1)).toBe(
      `The mail server could not be used: ${reply.slice(0, 500)}. Check SMTP_URL and the relay, then resume.`,
    );
  });
});

describe("createPacer (SMTP_RATE_PER_MINUTE)", () => {
  test("1200 a minute: the first call goes at once, each next one a 50 ms slot later", async () => {
    const pace = createPacer(1200);
    const start = performance.now();
    await pace();
    expect(performance.now() - start).toBeLessThan(30);
    await pace();
    await pace();
    const took = performance.now() - start;
    expect(took).toBeGreaterThanOrEqual(98);
    expect(took).toBeLessThan(1000);
    // A caller that comes late is not made to wait for slots it did not use.
    await Bun.sleep(120);
    const late = performance.now();
    await pace();
    expect(performance.now() - late).toBeLessThan(30);
  });

  test("0 (or less) does not wait", async () => {
    for (const rate of [0, -1]) {
      const pace = createPacer(rate);
      const start = performance.now();
      for (let i = 0; i < 50; i++) await pace();
      expect(performance.now() - start).toBeLessThan(100);
    }
  });
});
