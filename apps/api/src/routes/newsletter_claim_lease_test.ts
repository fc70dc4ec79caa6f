import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import {
  createSmtpMailer,
  deliverToRecipient,
  type Mailer,
  type SenderContext,
} from "@site/domain/newsletters";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// The row claim of decision 1102 under a lease that runs out while a delivery's mail is still with the
// SMTP server (issue 28 item 6). Two sending "processes" (each its own mailer and SMTP connections)
// deliver the same rows of one campaign on a real PostgreSQL to a real smtp-server on 127.0.0.1; the
// server holds its answers (to RCPT TO, or to the end of DATA) until the test lets them go, so each
// interleaving is certain, not a matter of timing.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);
const LEASE_MS = 1000;

let h: TestApp;
let sink: SmtpSink;
let key: string;
const mailers: Mailer[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  h = await buildTestApp({
    env: { SMTP_URL: sink.url, SMTP_RATE_PER_MINUTE: "0", NEWSLETTER_LEASE_MS: String(LEASE_MS) },
  });
  key = (await h.seedOrg({ siteLimit: 50 })).key;
});
afterAll(async () => {
  for (const m of mailers) await m.close();
  await h.close();
  await sink.close();
});

/** One sending process: its own SMTP connections (one per recipient, so none waits for another). */
function senderProcess(leaseMs = LEASE_MS): SenderContext {
  const log = createLogger("silent" as never);
  const mailer = createSmtpMailer(sink.url, { connections: 8, log });
  mailers.push(mailer);
  const config = { ...h.ctx.config, newsletter: { ...h.ctx.config.newsletter, leaseMs } };
  return { ...h.ctx, config, log, mailer, pace: async () => {}, bodies: new Map() };
}

/** A delivery job for a row, on its first of five tries (a failure is retried, never pauses). */
const deliver = (ctx: SenderContext, recipientId: string) =>
  deliverToRecipient(ctx, { data: { recipientId }, attempt: 1, attempts: 5 });

/** A campaign being sent to `n` fresh subscribers: its subject and recipient rows. */
async function sendingCampaign(n: number) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await h.call(method, path, { key, body });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json };
  };
  const emails = Array.from({ length: n }, (_, i) => `lease-${uniq()}-${i}@example.com`);
  const site = await call("POST", "/api/v1/sites", { name: "Lease News", slug: `l-${uniq()}` });
  const siteId = site.body.site.id as string;
  const added = await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
    subscribers: emails.map((email) => ({ email })),
  });
  expect(added.status).toBe(200);
  const subject = `Lease ${uniq()}`;
  const c = await call("POST", `/api/v1/sites/${siteId}/campaigns`, { subject, html: "<p>Hi</p>" });
  const cid = c.body.campaign.id as string;
  expect((await call("POST", `/api/v1/sites/${siteId}/campaigns/${cid}/send`)).status).toBe(202);
  const rows = await recipients(cid);
  expect(rows.map((r) => r.email).sort()).toEqual([...emails].sort());
  return { cid, subject, emails, ids: rows.map((r) => r.id) };
}

type Row = { id: string; email: string; status: string; tries: number; expired: boolean };
const recipients = async (cid: string) =>
  (await h.sql`
    select id, email, status, tries, coalesce(lease_until < now(), false) as expired
    from newsletter_recipients where campaign_id = ${cid}::uuid order by email`) as unknown as Row[];

const waitFor = async (what: string, check: () => Promise<boolean> | boolean, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
};

/**
 * Holds the server's answer for the first time each address reaches the hold point, until `release`;
 * later sessions for the same address pass (`held` lists the addresses waiting now).
 */
function firstPerAddress() {
  const seen = new Set<string>();
  const held: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  return {
    held,
    hold: async (address: string) => {
      if (seen.has(address)) return;
      seen.add(address);
      held.push(address);
      await gate;
    },
    release: () => open(),
  };
}

/** Each of `emails` got exactly one message of `subject` (the count per address, for a clear failure). */
const perAddress = (subject: string, emails: string[]) =>
  Object.fromEntries(
    emails.map((e) => [
      e,
      sink.messages.filter((m) => m.parsed?.subject === subject && m.to.includes(e)).length,
    ]),
  );
const once = (emails: string[]) => Object.fromEntries(emails.map((e) => [e, 1]));

describe("a claim whose lease runs out while its mail is with the SMTP server", () => {
  test("the second delivery takes the row and mails it; the first, let go afterwards, withdraws its message: one mail each", async () => {
    const c = await sendingCampaign(3);
    const first = senderProcess();
    const second = senderProcess();
    const rcpt = firstPerAddress();
    sink.holdRcpt = rcpt.hold;
    try {
      // The first process claims every row and is held by the server before its message goes out.
      const firstRuns = c.ids.map((id) =>
        deliver(first, id).then(
          () => "delivered",
          (e) => `${e}`,
        ),
      );
      await waitFor("the first process's envelopes on the server", () => rcpt.held.length === 3);
      await waitFor("the first claims' leases to run out", async () =>
        (await recipients(c.cid)).every((r) => r.status === "sending" && r.expired),
      );
      // The second process takes each row (lease out: that process is presumed dead) and mails it.
      await Promise.all(c.ids.map((id) => deliver(second, id)));
      const taken = await recipients(c.cid);
      expect(taken.map((r) => [r.status, r.tries])).toEqual(taken.map(() => ["sent", 2]));
      expect(perAddress(c.subject, c.emails)).toEqual(once(c.emails));
      // The first process goes on: its claim is gone, so its message is withdrawn mid-DATA.
      rcpt.release();
      const outcomes = await Promise.all(firstRuns);
      expect(perAddress(c.subject, c.emails)).toEqual(once(c.emails));
      for (const o of outcomes) expect(o).toContain("claim was lost");
      const after = await recipients(c.cid);
      expect(after.map((r) => [r.status, r.tries])).toEqual(after.map(() => ["sent", 2]));
    } finally {
      sink.holdRcpt = null;
      rcpt.release();
    }
  });

  test("both held on the server, the expired claim let go first: it withdraws, the live claim mails: one mail each, from the live claim", async () => {
    const c = await sendingCampaign(3);
    const first = senderProcess();
    const second = senderProcess(60_000);
    const firstRcpt = firstPerAddress();
    const secondRcpt = firstPerAddress();
    // The first session per address belongs to the first process, the next to the second.
    const seen = new Set<string>();
    sink.holdRcpt = (address) => {
      if (!seen.has(address)) {
        seen.add(address);
        return firstRcpt.hold(address);
      }
      return secondRcpt.hold(address);
    };
    try {
      const firstRuns = c.ids.map((id) =>
        deliver(first, id).then(
          () => "delivered",
          (e) => `${e}`,
        ),
      );
      await waitFor("the first process's envelopes on the server", () => firstRcpt.held.length === 3);
      await waitFor("the first claims' leases to run out", async () =>
        (await recipients(c.cid)).every((r) => r.status === "sending" && r.expired),
      );
      const secondRuns = c.ids.map((id) =>
        deliver(second, id).then(
          () => "delivered",
          (e) => `${e}`,
        ),
      );
      await waitFor("the second process's envelopes on the server", () => secondRcpt.held.length === 3);
      const claimed = await recipients(c.cid);
      expect(claimed.map((r) => [r.status, r.tries, r.expired])).toEqual(
        claimed.map(() => ["sending", 2, false]),
      );
      // The process whose claim ran out reaches the end of DATA first: it must not mark the row sent.
      firstRcpt.release();
      const firstOutcomes = await Promise.all(firstRuns);
      expect(perAddress(c.subject, c.emails)).toEqual(Object.fromEntries(c.emails.map((e) => [e, 0])));
      for (const o of firstOutcomes) expect(o).toContain("claim was lost");
      secondRcpt.release();
      expect(await Promise.all(secondRuns)).toEqual(c.ids.map(() => "delivered"));
      expect(perAddress(c.subject, c.emails)).toEqual(once(c.emails));
      const after = await recipients(c.cid);
      expect(after.map((r) => [r.status, r.tries])).toEqual(after.map(() => ["sent", 2]));
    } finally {
      sink.holdRcpt = null;
      firstRcpt.release();
      secondRcpt.release();
    }
  });

  test("the server holds its answer to the end of DATA past the lease: the row is already sent, a second delivery takes nothing", async () => {
    const c = await sendingCampaign(3);
    const first = senderProcess();
    const second = senderProcess();
    const data = firstPerAddress();
    sink.holdData = (mail) => data.hold(mail.to[0] ?? "");
    try {
      const firstRuns = c.ids.map((id) =>
        deliver(first, id).then(
          () => "delivered",
          (e) => `${e}`,
        ),
      );
      await waitFor("the first process's messages on the server", () => data.held.length === 3);
      // The row was committed as sent with the end of DATA; wait out the lease it was claimed with.
      await Bun.sleep(LEASE_MS + 100);
      const held = await recipients(c.cid);
      expect(held.map((r) => [r.status, r.tries])).toEqual(held.map(() => ["sent", 1]));
      // A second delivery of each row (a duplicate job, the sweep's fan-out) finds nothing to claim.
      await Promise.all(c.ids.map((id) => deliver(second, id)));
      data.release();
      expect(await Promise.all(firstRuns)).toEqual(c.ids.map(() => "delivered"));
      expect(perAddress(c.subject, c.emails)).toEqual(once(c.emails));
      const after = await recipients(c.cid);
      expect(after.map((r) => [r.status, r.tries])).toEqual(after.map(() => ["sent", 1]));
    } finally {
      sink.holdData = null;
      data.release();
    }
  });

  test("while the claim's lease holds, a second delivery of the row takes nothing and the first mails it", async () => {
    const c = await sendingCampaign(3);
    const first = senderProcess(60_000);
    const second = senderProcess(60_000);
    const rcpt = firstPerAddress();
    sink.holdRcpt = rcpt.hold;
    try {
      const firstRuns = c.ids.map((id) =>
        deliver(first, id).then(
          () => "delivered",
          (e) => `${e}`,
        ),
      );
      await waitFor("the first process's envelopes on the server", () => rcpt.held.length === 3);
      await Promise.all(c.ids.map((id) => deliver(second, id)));
      const during = await recipients(c.cid);
      expect(during.map((r) => [r.status, r.tries])).toEqual(during.map(() => ["sending", 1]));
      expect(perAddress(c.subject, c.emails)).toEqual(Object.fromEntries(c.emails.map((e) => [e, 0])));
      rcpt.release();
      expect(await Promise.all(firstRuns)).toEqual(c.ids.map(() => "delivered"));
      expect(perAddress(c.subject, c.emails)).toEqual(once(c.emails));
    } finally {
      sink.holdRcpt = null;
      rcpt.release();
    }
  });
});
