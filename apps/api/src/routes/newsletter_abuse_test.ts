import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSmtpMailer, type NewsletterSender, startNewsletterSender } from "@site/domain/newsletters";
import { setSitePublished, siteById } from "@site/domain/sites";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Newsletter findings of the second adversarial run (issue 25, LOW): concurrent sign-ups, the
// per-address limit across an organization, the campaign HTML allow-list, metered test sends and
// deep nesting. A real SMTP server (smtp-server) on 127.0.0.1 and a real PostgreSQL.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);
const TEST_BUDGET = 3;

let h: TestApp;
let sink: SmtpSink;
let sender: NewsletterSender;
let mailer: ReturnType<typeof createSmtpMailer>;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;

beforeAll(async () => {
  sink = await startSmtpSink();
  const env = {
    SMTP_URL: sink.url,
    SMTP_RATE_PER_MINUTE: "0",
    PUBLIC_BASE_URL: "https://news.example.test",
    NEWSLETTER_TEST_SENDS_PER_DAY: String(TEST_BUDGET),
  };
  mailer = createSmtpMailer(sink.url, { connections: 4, log: console as never });
  h = await buildTestApp({ env, mailer });
  owner = await h.seedOrg({ siteLimit: 100 });
  sender = await startNewsletterSender(h.ctx, { mailer });
});
afterAll(async () => {
  await sender.stop({ graceMs: 100 });
  await mailer.close();
  await h.close();
  await sink.close();
});

const call = async (method: string, path: string, body?: unknown, key = owner.key) => {
  const res = await h.call(method, path, { key, body });
  return { status: res.status, headers: res.headers, body: (await res.json().catch(() => null)) as Json };
};
const newSite = async (published = false, key = owner.key) => {
  const slug = `a-${uniq()}`;
  const id = (await call("POST", "/api/v1/sites", { name: "Garden", slug }, key)).body.site.id as string;
  if (published) await setSitePublished(h.ctx, await siteById(h.ctx, id), true);
  return { id, slug };
};
const subscribe = (slug: string, email: string) =>
  h.call("POST", `/api/v1/public/sites/${slug}/subscribe`, { body: { email } });
const mailsTo = (addr: string) => sink.messages.filter((m) => m.to.includes(addr));

describe("public subscribe", () => {
  test("five concurrent sign-ups of one address send exactly one confirmation (reserved before sending)", async () => {
    const site = await newSite(true);
    const email = `race-${uniq()}@example.net`;
    const answers = await Promise.all(Array.from({ length: 5 }, () => subscribe(site.slug, email)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const end = Date.now() + 5000;
    while (mailsTo(email).length === 0 && Date.now() < end) await Bun.sleep(25);
    // Later mails would have been sent right after the first: give them time to arrive.
    await Bun.sleep(1000);
    expect(mailsTo(email)).toHaveLength(1);
  });

  test("the per-address limit counts across the organization's sites, not per site", async () => {
    const sites = await Promise.all(Array.from({ length: 3 }, () => newSite(true)));
    const email = `spread-${uniq()}@example.net`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await subscribe(sites[i % 3]!.slug, email)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    // Another organization's site is not this one's allowance.
    const other = await h.seedOrg();
    const theirs = await newSite(true, other.key);
    expect((await subscribe(theirs.slug, email)).status).toBe(202);
  });
});

describe("campaign HTML", () => {
  test("outside the email allow-list is removed (sanitize-html): data: links, meta refresh, SVG animate, iframe srcdoc; jav&#x09;ascript: is refused", async () => {
    const { id } = await newSite();
    const tabbed = await call("POST", `/api/v1/sites/${id}/campaigns`, {
      subject: "S",
      html: '<p><a href="jav&#x09;ascript:alert(1)">x</a></p>',
    });
    expect(tabbed.status).toBe(400);
    expect(tabbed.body.error.details[0].message).toContain("javascript:");
    const html = [
      '<head><meta http-equiv="refresh" content="0;url=javascript:alert(1)"></head>',
      '<p><a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a></p>',
      '<svg><animate attributeName="href" values="javascript:alert(2)"/><a href="#x"><text>svg</text></a></svg>',
      '<iframe srcdoc="&lt;script&gt;alert(3)&lt;/script&gt;"></iframe>',
      '<table cellpadding="0"><tr><td style="color:#333"><a href="https://example.com/shop">Shop</a></td></tr></table>',
    ].join("\n");
    const created = await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "Clean", html });
    expect(created.status).toBe(201);
    const stored = created.body.campaign.html as string;
    for (const bad of ["javascript:", "data:text/html", "refresh", "<svg", "<animate", "<iframe", "srcdoc"])
      expect(stored).not.toContain(bad);
    expect(stored).toContain('<a href="https://example.com/shop">Shop</a>');
    expect(stored).toContain('<td style="color:#333">');
    // And what goes out by mail is as clean.
    const to = owner.user.email;
    expect(
      (await call("POST", `/api/v1/sites/${id}/campaigns/${created.body.campaign.id}/test`, { to: [to] }))
        .status,
    ).toBe(202);
    const end = Date.now() + 10_000;
    while (!mailsTo(to).some((m) => m.parsed?.subject === "[Test] Clean") && Date.now() < end)
      await Bun.sleep(25);
    const mail = mailsTo(to).find((m) => m.parsed?.subject === "[Test] Clean")!;
    const mailed = String(mail.parsed!.html);
    for (const bad of ["javascript:", "data:text/html", "refresh", "<svg", "<iframe", "srcdoc"])
      expect(mailed).not.toContain(bad);
    expect(mailed).toContain("https://example.com/shop");
  });

  test("HTML nested 30,000 deep answers 400 VALIDATION_ERROR, not 500", async () => {
    const { id } = await newSite();
    const deep = `${"<div>".repeat(30_000)}x${"</div>".repeat(30_000)}`;
    const r = await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "Deep", html: deep });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.message).toContain("nested");
    const fonts = await call("POST", `/api/v1/sites/${id}/campaigns`, {
      subject: "Deep",
      html: "<font>".repeat(30_000),
    });
    expect(fonts.status).toBe(400);
    // Ordinary layouts (unclosed cells and paragraphs, nested tables) pass.
    const layout = `${"<table><tr><td>".repeat(40)}<p>a<p>b${"</table>".repeat(40)}`;
    expect(
      (await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "Ok", html: layout })).status,
    ).toBe(201);
  });
});

describe("test sends", () => {
  test("go to members freely and to other addresses within the organization's daily budget; beyond it 429 with Retry-After", async () => {
    const { id } = await newSite();
    const c = (await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "T", html: "<p>t</p>" })).body
      .campaign;
    const test = (to: string[]) => call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/test`, { to });
    for (let i = 0; i < TEST_BUDGET + 2; i++)
      expect((await test([owner.user.email.toUpperCase()])).status).toBe(202);
    const outsiders = Array.from({ length: TEST_BUDGET }, (_, i) => `o${i}-${uniq()}@example.org`);
    expect((await test(outsiders.slice(0, 2))).status).toBe(202);
    expect((await test([outsiders[2]!])).status).toBe(202);
    const over = await test([`over-${uniq()}@example.org`, owner.user.email]);
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("RATE_LIMITED");
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(86_400);
    // Members still get theirs; the budget is the organization's, across its sites.
    expect((await test([owner.user.email])).status).toBe(202);
    const site2 = await newSite();
    const c2 = (await call("POST", `/api/v1/sites/${site2.id}/campaigns`, { subject: "T", html: "<p>t</p>" }))
      .body.campaign;
    const other = await call("POST", `/api/v1/sites/${site2.id}/campaigns/${c2.id}/test`, {
      to: [`x-${uniq()}@example.org`],
    });
    expect(other.status).toBe(429);
    // Another organization has its own budget.
    const org2 = await h.seedOrg();
    const s3 = await newSite(false, org2.key);
    const c3 = (
      await call("POST", `/api/v1/sites/${s3.id}/campaigns`, { subject: "T", html: "<p>t</p>" }, org2.key)
    ).body.campaign;
    const theirs = await call(
      "POST",
      `/api/v1/sites/${s3.id}/campaigns/${c3.id}/test`,
      { to: [`y-${uniq()}@example.org`] },
      org2.key,
    );
    expect(theirs.status).toBe(202);
  });
});
