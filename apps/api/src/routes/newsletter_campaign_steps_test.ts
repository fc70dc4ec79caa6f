import { describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { addLibraryFile } from "@site/domain/media";
import {
  createPacer,
  fanOutCampaign,
  MailSendError,
  pauseCampaign,
  pauseReason,
  type QueueContext,
  sweepNewsletters,
} from "@site/domain/newsletters";
import { sampleImage } from "@site/domain/testing";
import { createMemoryQueue, type JobQueue } from "@site/queue";
import {
  call,
  campaign,
  campaignRow,
  deliver,
  h,
  type Json,
  logLines,
  mailsTo,
  pausedEvents,
  recipients,
  senderProcess,
  uniq,
  useSendingBed,
  waitFor,
} from "../../testing/newsletter_sending_bed.ts";

// The campaign steps of libs/domain/newsletters/sending.ts (decisions 1102, 1103, 1110), each on its
// own against a real smtp-server on 127.0.0.1 and a real PostgreSQL: the rendered body's cache, the
// pause, the fan-out and the sweep, the pause's sentences and the pacer. One delivery at a time is in
// newsletter_sending_test.ts.

useSendingBed();

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
