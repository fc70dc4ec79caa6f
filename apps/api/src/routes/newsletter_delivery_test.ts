import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { addLibraryFile } from "@site/domain/media";
import {
  type Mailer,
  type NewsletterSender,
  openMailer,
  startNewsletterSender,
} from "@site/domain/newsletters";
import { type ReceivedMail, type SmtpSink, sampleImage, startSmtpSink } from "@site/domain/testing";
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Delivery as real mail servers expect it (CONTRACT "Newsletters", issue 24; decisions 1110-1112):
// the EHLO name, pausing instead of bouncing on relay failures, DKIM, the tagged envelope sender and
// the inbound route for DSNs and complaints. A real SMTP server (smtp-server) on 127.0.0.1 throughout.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);
const OPERATOR_TOKEN = "operator-token-0123456789abcdef";
const SMTP_AUTH = { user: "relay-user", pass: "relay-pass" };

type Harness = { h: TestApp; sink: SmtpSink; mailer: Mailer; sender: NewsletterSender; key: string };

/** The app, a relay that wants AUTH, the mailer as `./scripts/start` opens it, and the sender. */
async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const sink = await startSmtpSink({ auth: SMTP_AUTH });
  const config = {
    SMTP_URL: `smtp://${SMTP_AUTH.user}:${SMTP_AUTH.pass}@127.0.0.1:${sink.port}`,
    SMTP_RATE_PER_MINUTE: "0",
    NEWSLETTER_SWEEP_EVERY_MS: "200",
    NEWSLETTER_LEASE_MS: "2000",
    PUBLIC_BASE_URL: "https://news.example.test",
    OPERATOR_TOKEN,
    ...env,
  };
  // The mailer as the server opens it: from the configuration (SMTP_URL, SMTP_HELO_NAME's default).
  const parsed = loadConfig({
    SECRET_KEY: "test-secret-key-0123456789",
    DATA_DIR: "/tmp/site-test-data",
    ...config,
  });
  const mailer = openMailer(parsed, createLogger("silent" as never), { connections: 2 });
  const app = await buildTestApp({ env: config, mailer });
  const owner = await app.seedOrg({ siteLimit: 100 });
  const sender = await startNewsletterSender(app.ctx, { mailer });
  return { h: app, sink, mailer, sender, key: owner.key };
}

async function stop(x: Harness) {
  await x.sender.stop({ graceMs: 100 });
  await x.mailer.close();
  await x.h.close();
  await x.sink.close();
}

const waitFor = async (what: string, check: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
};

function api(x: Harness) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await x.h.call(method, path, { key: x.key, body });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json };
  };
  const site = async (emails: string[]) => {
    const s = await call("POST", "/api/v1/sites", { name: "Garden News", slug: `d-${uniq()}` });
    const id = s.body.site.id as string;
    if (emails.length > 0) {
      const r = await call("POST", `/api/v1/sites/${id}/subscribers`, {
        subscribers: emails.map((email) => ({ email })),
      });
      expect(r.status).toBe(200);
    }
    return id;
  };
  const campaign = async (siteId: string, subject: string) =>
    (await call("POST", `/api/v1/sites/${siteId}/campaigns`, { subject, html: "<p>Hello</p>" })).body
      .campaign as Json;
  const read = async (siteId: string, cid: string) =>
    (await call("GET", `/api/v1/sites/${siteId}/campaigns/${cid}`)).body.campaign as Json;
  const subscribers = async (siteId: string, status: string) =>
    (
      (await call("GET", `/api/v1/sites/${siteId}/subscribers?status=${status}`)).body.subscribers as Json[]
    ).map((s) => s.email as string);
  return { call, site, campaign, read, subscribers };
}

const mailsWith = (sink: SmtpSink, subject: string, to?: string) =>
  sink.messages.filter((m) => m.parsed?.subject === subject && (!to || m.to.includes(to)));

describe("delivery to a relay that wants AUTH", () => {
  let x: Harness;
  beforeAll(async () => {
    x = await harness();
  });
  afterAll(async () => {
    await stop(x);
  });

  test("EHLO gives the host of PUBLIC_BASE_URL, never localhost", async () => {
    const a = api(x);
    const email = `helo-${uniq()}@example.com`;
    const siteId = await a.site([email]);
    const c = await a.campaign(siteId, `Helo ${uniq()}`);
    expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
    await waitFor("the mail", () => mailsWith(x.sink, c.subject, email).length === 1);
    expect(x.sink.helos.length).toBeGreaterThan(0);
    expect(new Set(x.sink.helos)).toEqual(new Set(["news.example.test"]));
  });

  test("a relay refusing AUTH bounces nobody: the campaign pauses with the reply, and after resume every active subscriber has exactly one mail", async () => {
    const a = api(x);
    const emails = Array.from({ length: 6 }, (_, i) => `auth${i}-${uniq()}@example.com`);
    const siteId = await a.site(emails);
    const c = await a.campaign(siteId, `Auth ${uniq()}`);
    x.sink.refuseAuth = "535 5.7.8 Authentication credentials invalid";
    // Connections opened before the refusal would still be logged in: start from fresh ones.
    await x.mailer.close();
    try {
      expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
      await waitFor("the pause", async () => (await a.read(siteId, c.id)).status === "paused");
      const paused = await a.read(siteId, c.id);
      expect(paused.error).toContain("535");
      expect(paused.error).toContain("login");
      expect(paused.counts).toMatchObject({ sent: 0, bounced: 0, failed: 0, queued: emails.length });
      expect(await a.subscribers(siteId, "bounced")).toEqual([]);
      expect((await a.subscribers(siteId, "active")).sort()).toEqual([...emails].sort());
      // Paused means paused: nothing goes out while it stays so.
      await Bun.sleep(500);
      expect(mailsWith(x.sink, c.subject)).toEqual([]);
      const again = await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`);
      expect(again.status).toBe(400);
    } finally {
      x.sink.refuseAuth = null;
    }
    const resumed = await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/resume`);
    expect(resumed.status).toBe(202);
    expect(resumed.body.campaign).toMatchObject({ status: "sending", error: null });
    await waitFor("sent", async () => (await a.read(siteId, c.id)).status === "sent");
    await waitFor("every mail", () => emails.every((e) => mailsWith(x.sink, c.subject, e).length >= 1));
    await Bun.sleep(300);
    for (const e of emails) expect(mailsWith(x.sink, c.subject, e)).toHaveLength(1);
    expect((await a.read(siteId, c.id)).counts).toEqual({
      queued: 0,
      sent: emails.length,
      failed: 0,
      bounced: 0,
      refusedByPolicy: 0,
    });
    const twice = await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/resume`);
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toContain("sent");
  }, 60_000);

  test("a relay refusing the sender (550 5.7.1 at MAIL FROM) pauses without bouncing; a 550 to one RCPT TO bounces only that one", async () => {
    const a = api(x);
    const emails = [`from1-${uniq()}@example.com`, `from2-${uniq()}@example.com`];
    const siteId = await a.site(emails);
    const c = await a.campaign(siteId, `From ${uniq()}`);
    x.sink.refuseMailFrom = "550 5.7.1 Sender address rejected: not owned by user";
    try {
      expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
      await waitFor("the pause", async () => (await a.read(siteId, c.id)).status === "paused");
      const paused = await a.read(siteId, c.id);
      expect(paused.error).toContain("5.7.1");
      expect(paused.error).toContain("MAIL FROM");
      expect(await a.subscribers(siteId, "bounced")).toEqual([]);
    } finally {
      x.sink.refuseMailFrom = null;
    }
    expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/resume`)).status).toBe(202);
    await waitFor("sent", async () => (await a.read(siteId, c.id)).status === "sent");
    await waitFor("both mails", () => emails.every((e) => mailsWith(x.sink, c.subject, e).length === 1));
    expect(await a.subscribers(siteId, "bounced")).toEqual([]);
  }, 60_000);
});

/** A DSN (RFC 3464) as a receiving MTA sends it back to the envelope sender of `mail`. */
function dsn(mail: ReceivedMail, status: string, opts: { to?: string } = {}): string {
  const b = `dsn-${uniq()}`;
  const original = mail.raw.toString("utf8").split(/\r?\n\r?\n/)[0];
  return [
    "From: Mail Delivery System <MAILER-DAEMON@mx.example.org>",
    `To: ${opts.to ?? mail.from}`,
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
    `Diagnostic-Code: smtp; ${status.startsWith("5") ? "550" : "452"} ${status} mailbox problem`,
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

/** An abuse report (RFC 5965) as a mailbox provider's feedback loop sends it. */
function arf(mail: ReceivedMail): string {
  const b = `arf-${uniq()}`;
  return [
    "From: Feedback Loop <fbl@mailbox.example.net>",
    "To: fbl-reports@news.example.test",
    "Subject: Abuse report",
    "MIME-Version: 1.0",
    `Content-Type: multipart/report; report-type=feedback-report; boundary="${b}"`,
    "",
    `--${b}`,
    "Content-Type: text/plain",
    "",
    "This is an abuse report.",
    `--${b}`,
    "Content-Type: message/feedback-report",
    "",
    "Feedback-Type: abuse",
    "User-Agent: ExampleFBL/1.0",
    "Version: 1",
    `Original-Mail-From: <${mail.from}>`,
    `Original-Rcpt-To: <${mail.to[0]}>`,
    "",
    `--${b}`,
    "Content-Type: message/rfc822",
    "",
    `Return-Path: <${mail.from}>`,
    mail.raw.toString("utf8"),
    `--${b}--`,
    "",
  ].join("\r\n");
}

describe("bounces and complaints: the tagged envelope sender and POST /api/v1/newsletter/inbound", () => {
  let x: Harness;
  beforeAll(async () => {
    x = await harness({ MAIL_BOUNCE_ADDRESS: "bounces@news.example.test" });
  });
  afterAll(async () => {
    await stop(x);
  });
  const inbound = async (body: string, token: string | null = OPERATOR_TOKEN) => {
    const res = await x.h.app.handle(
      new Request("http://localhost/api/v1/newsletter/inbound", {
        method: "POST",
        headers: {
          "content-type": "message/rfc822",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body,
      }),
    );
    return { status: res.status, body: (await res.json()) as Json };
  };

  test("each mail's envelope sender is MAIL_BOUNCE_ADDRESS tagged per recipient; a 5.x.x DSN bounces that one, a 4.x.x changes nothing, a complaint unsubscribes", async () => {
    const a = api(x);
    const [hard, soft, angry, fine] = ["hard", "soft", "angry", "fine"].map(
      (n) => `${n}-${uniq()}@example.com`,
    );
    const siteId = await a.site([hard!, soft!, angry!, fine!]);
    const c = await a.campaign(siteId, `Tagged ${uniq()}`);
    expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
    await waitFor("four mails", () => mailsWith(x.sink, c.subject).length === 4);
    const mailTo = (e: string) => mailsWith(x.sink, c.subject, e)[0]!;
    const senders = new Set([hard, soft, angry, fine].map((e) => mailTo(e!).from));
    expect(senders.size).toBe(4);
    for (const s of senders) expect(s).toMatch(/^bounces\+r[0-9a-f]{32}\.[0-9a-f]{12}@news\.example\.test$/);
    // The From header stays MAIL_FROM (the envelope is not the author).
    expect(mailTo(hard!).parsed!.from!.value[0]!.address).toBe("newsletter@news.example.test");
    await waitFor("sent", async () => (await a.read(siteId, c.id)).status === "sent");

    // Without the operator token: 401, nothing read.
    const anon = await inbound(dsn(mailTo(hard!), "5.1.1"), null);
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe("UNAUTHORIZED");
    expect((await inbound(dsn(mailTo(hard!), "5.1.1"), "wrong-token-0123456789abcdef")).status).toBe(401);

    const later = await inbound(dsn(mailTo(soft!), "4.2.2"));
    expect(later).toEqual({
      status: 202,
      body: {
        accepted: true,
        report: "delivery-status",
        status: "4.2.2",
        kind: "soft",
        action: "none",
        changed: 0,
      },
    });
    const bounced = await inbound(dsn(mailTo(hard!), "5.1.1"));
    expect(bounced.body).toMatchObject({
      report: "delivery-status",
      status: "5.1.1",
      action: "bounced",
      changed: 1,
    });
    const complaint = await inbound(arf(mailTo(angry!)));
    expect(complaint.body).toMatchObject({ report: "feedback-report", action: "unsubscribed", changed: 1 });
    expect(await a.subscribers(siteId, "bounced")).toEqual([hard]);
    expect(await a.subscribers(siteId, "unsubscribed")).toEqual([angry]);
    expect((await a.subscribers(siteId, "active")).sort()).toEqual([soft, fine].sort());
    expect((await a.read(siteId, c.id)).counts).toMatchObject({ sent: 3, bounced: 1 });

    // A message naming no recipient of ours, and a forged tag: 202, nothing changes.
    const untagged = dsn(mailTo(fine!), "5.1.1", { to: "postmaster@news.example.test" }).replace(
      /bounces\+[^@\s>]+@/g,
      "someone@",
    );
    const stranger = await inbound(untagged);
    expect(stranger).toMatchObject({ status: 202, body: { status: "5.1.1", action: "bounced", changed: 0 } });
    const forgedTag = mailTo(fine!).from.replace(/\.[0-9a-f]{12}@/, ".000000000000@");
    const forged = await inbound(
      dsn(mailTo(fine!), "5.1.1", { to: forgedTag }).replaceAll(mailTo(fine!).from, forgedTag),
    );
    expect(forged).toMatchObject({ status: 202, body: { changed: 0 } });
    const plain = await inbound("From: a@example.org\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nhello\r\n");
    expect(plain).toEqual({
      status: 202,
      body: { accepted: true, report: "other", status: null, kind: null, action: "none", changed: 0 },
    });
    expect((await a.subscribers(siteId, "active")).sort()).toEqual([soft, fine].sort());
    const empty = await inbound("");
    expect(empty.status).toBe(400);
  }, 60_000);

  test("a confirmation mail's bounce marks that subscriber bounced", async () => {
    const a = api(x);
    const siteId = await a.site([]);
    const email = `pending-${uniq()}@example.com`;
    expect(
      (await a.call("POST", `/api/v1/sites/${siteId}/subscribers`, { email, status: "pending" })).status,
    ).toBe(201);
    await waitFor("the confirmation", () => x.sink.messages.some((m) => m.to.includes(email)));
    const mail = x.sink.messages.find((m) => m.to.includes(email))!;
    expect(mail.from).toMatch(/^bounces\+s[0-9a-f]{32}\.[0-9a-f]{12}@news\.example\.test$/);
    const r = await inbound(dsn(mail, "5.1.1"));
    expect(r.body).toMatchObject({ action: "bounced", changed: 1 });
    expect(await a.subscribers(siteId, "bounced")).toEqual([email]);
  });

  test("the inbound route is documented in the OpenAPI document, and paused campaigns too", async () => {
    const doc = (await (await x.h.call("GET", "/swagger/json")).json()) as Json;
    const op = doc.paths["/api/v1/newsletter/inbound"]?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op.requestBody.content)).toContain("message/rfc822");
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["202", "401"]));
    expect(doc.paths["/api/v1/sites/{siteId}/campaigns/{campaignId}/resume"]?.post).toBeDefined();
    expect(JSON.stringify(doc)).toContain('"paused"');
  });
});

describe("DKIM: every mail verifies with an independent verifier against the selectors' published keys", () => {
  for (const types of [["rsa"], ["rsa", "ed25519"]] as const) {
    test(`${types.join(" + ")}: campaign and confirmation mails carry one signature per key, each verifies (mailauth dkimVerify); h= covers From, To, Subject, Date, Message-ID and both List-Unsubscribe headers`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "dkim-test-"));
      const keys = types.map((type) => {
        const pair =
          type === "rsa"
            ? generateKeyPairSync("rsa", { modulusLength: 2048 })
            : generateKeyPairSync("ed25519");
        const file = join(dir, `${type}.pem`);
        writeFileSync(file, pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string);
        const spki = pair.publicKey.export({ type: "spki", format: "der" }) as Buffer;
        // RFC 6376 §3.6.1: p= is the SubjectPublicKeyInfo for RSA; RFC 8463 §4: the raw key for Ed25519.
        const p =
          type === "rsa" ? spki.toString("base64") : spki.subarray(spki.length - 32).toString("base64");
        return { type, file, selector: `${type}2026`, txt: `v=DKIM1; k=${type}; p=${p}` };
      });
      const x = await harness({
        DKIM_DOMAIN: "news.example.test",
        DKIM_SELECTOR: keys.map((k) => k.selector).join(","),
        DKIM_PRIVATE_KEY_FILE: keys.map((k) => k.file).join(", "),
      });
      try {
        const a = api(x);
        const email = `dkim-${uniq()}@example.com`;
        const siteId = await a.site([email]);
        const c = await a.campaign(siteId, `Signed ${uniq()}`);
        expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
        const pendingAddr = `confirm-${uniq()}@example.com`;
        await a.call("POST", `/api/v1/sites/${siteId}/subscribers`, {
          email: pendingAddr,
          status: "pending",
        });
        await waitFor(
          "both mails",
          () =>
            mailsWith(x.sink, c.subject, email).length === 1 &&
            x.sink.messages.some((m) => m.to.includes(pendingAddr)),
        );
        const lookups: string[] = [];
        const resolver = async (name: string, rrtype: string) => {
          lookups.push(`${name} ${rrtype}`);
          const key = keys.find((k) => name === `${k.selector}._domainkey.news.example.test`);
          if (rrtype === "TXT" && key) return [[key.txt]];
          throw Object.assign(new Error(`no ${rrtype} for ${name}`), { code: "ENOTFOUND" });
        };
        for (const mail of [
          mailsWith(x.sink, c.subject, email)[0]!,
          x.sink.messages.find((m) => m.to.includes(pendingAddr))!,
        ]) {
          const v = await dkimVerify(mail.raw, { resolver });
          expect(v.results).toHaveLength(keys.length);
          expect(v.results.map((r) => r.algo).sort()).toEqual(keys.map((k) => `${k.type}-sha256`).sort());
          for (const r of v.results) {
            expect(r.status.result).toBe("pass");
            expect(r.signingDomain).toBe("news.example.test");
            expect(keys.map((k) => k.selector)).toContain(r.selector ?? "");
            expect(r.format).toBe("relaxed/relaxed");
            const signed = r
              .signingHeaders!.keys.toLowerCase()
              .split(":")
              .map((k) => k.trim());
            expect(signed).toEqual(expect.arrayContaining(["from", "to", "subject", "date", "message-id"]));
            if (mail.parsed?.subject === c.subject)
              expect(signed).toEqual(
                expect.arrayContaining(["list-unsubscribe", "list-unsubscribe-post", "feedback-id"]),
              );
          }
          // Feedback-ID on every mail (campaign, site, organization, sender), Gmail's bulk-sender header.
          const feedback = mail.parsed!.headers.get("feedback-id");
          expect(typeof feedback).toBe("string");
          if (mail.parsed?.subject === c.subject)
            expect(String(feedback)).toContain(c.id.replaceAll("-", ""));
          expect(String(feedback)).toContain(siteId.replaceAll("-", ""));
          // A changed header breaks each: the verifier is really checking.
          const tampered = Buffer.from(
            mail.raw.toString("latin1").replace(/^Subject: .*$/m, "Subject: Changed"),
            "latin1",
          );
          for (const r of (await dkimVerify(tampered, { resolver })).results)
            expect(r.status.result).toBe("fail");
        }
        for (const k of keys) expect(lookups).toContain(`${k.selector}._domainkey.news.example.test TXT`);
      } finally {
        await stop(x);
      }
    }, 60_000);
  }
});

describe("mail images: readable for a year, revocable per campaign", () => {
  let x: Harness;
  beforeAll(async () => {
    x = await harness();
  });
  afterAll(async () => {
    await stop(x);
  });

  test("a campaign's image links last NEWSLETTER_MAIL_MEDIA_TTL_S (a year by default) and stop opening after revoke-media or the campaign's deletion", async () => {
    const a = api(x);
    const email = `img-${uniq()}@example.com`;
    const siteId = await a.site([email]);
    const file = await addLibraryFile(x.h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
    const send = async (subject: string) => {
      const c = (
        await a.call("POST", `/api/v1/sites/${siteId}/campaigns`, {
          subject,
          html: `<p><img src="/api/media/${file.key}" alt="Seeds"></p>`,
        })
      ).body.campaign as Json;
      expect((await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.id}/send`)).status).toBe(202);
      await waitFor("the mail", () => mailsWith(x.sink, subject, email).length === 1);
      await waitFor("sent", async () => (await a.read(siteId, c.id)).status === "sent");
      const html = String(mailsWith(x.sink, subject, email)[0]!.parsed!.html);
      const src = /<img[^>]+src="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
      const u = new URL(src);
      return { c, local: `${u.pathname}${u.search}`, token: u.searchParams.get("t")! };
    };
    const first = await send(`Images ${uniq()}`);
    expect((await x.h.call("GET", first.local)).status).toBe(200);
    const exp = Number(first.token.split(".")[3]) * 1000;
    expect(exp - Date.now()).toBeGreaterThan(364 * 86_400_000);
    expect(exp - Date.now()).toBeLessThanOrEqual(366 * 86_400_000);
    const revoked = await a.call("POST", `/api/v1/sites/${siteId}/campaigns/${first.c.id}/revoke-media`);
    expect(revoked.status).toBe(200);
    expect((await x.h.call("GET", first.local)).status).toBe(403);
    // A forged generation does not bring it back.
    const bumped = first.local.replace(`.${first.token.split(".")[2]}.`, ".1.");
    expect((await x.h.call("GET", bumped)).status).toBe(403);

    const second = await send(`Images ${uniq()}`);
    expect((await x.h.call("GET", second.local)).status).toBe(200);
    expect((await a.call("DELETE", `/api/v1/sites/${siteId}/campaigns/${second.c.id}`)).status).toBe(204);
    expect((await x.h.call("GET", second.local)).status).toBe(403);
  }, 60_000);
});

describe("start-up warning", () => {
  test("the sender warns when PUBLIC_BASE_URL is not https (RFC 8058 one-click needs https), and not when it is", async () => {
    for (const [base, warns] of [
      ["http://127.0.0.1:3000", true],
      ["https://news.example.test", false],
    ] as const) {
      const lines: string[] = [];
      const log = createLogger("warn", {}, { sink: (line) => lines.push(line) });
      const h = await buildTestApp({ env: { PUBLIC_BASE_URL: base }, log });
      const sender = await startNewsletterSender(h.ctx);
      try {
        const warning = lines.find((l) => l.includes("RFC 8058"));
        if (warns) {
          expect(warning).toBeDefined();
          expect(warning).toContain("not https");
          expect(JSON.parse(warning!).level).toBe("warn");
        } else expect(warning).toBeUndefined();
      } finally {
        await sender.stop({ graceMs: 100 });
        await h.close();
      }
    }
  });
});
