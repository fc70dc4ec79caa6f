import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newsletterRecipients } from "@site/db";
import { createUserSession } from "@site/domain/core";
import { addLibraryFile, grantMemberUrl } from "@site/domain/media";
import { createSmtpMailer, type NewsletterSender, startNewsletterSender } from "@site/domain/newsletters";
import { setSitePublished, siteById } from "@site/domain/sites";
import { type ReceivedMail, type SmtpSink, sampleImage, startSmtpSink } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);
/** How long mailed share tokens live in this file: short, so that a test sees one expire. */
const TOKEN_TTL_S = 8;

let h: TestApp;
let sink: SmtpSink;
let sender: NewsletterSender;
let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
let mailer: ReturnType<typeof createSmtpMailer>;
const BOUNCING = "bounce@example.org";
const DEFERRED = "later@example.org";

beforeAll(async () => {
  sink = await startSmtpSink({ reject: [BOUNCING], defer: { [DEFERRED]: 1 } });
  const env = {
    SMTP_URL: sink.url,
    SMTP_RATE_PER_MINUTE: "0",
    NEWSLETTER_MEDIA_TOKEN_TTL_S: String(TOKEN_TTL_S),
    NEWSLETTER_MAIL_MEDIA_TTL_S: String(TOKEN_TTL_S),
    NEWSLETTER_SWEEP_EVERY_MS: "200",
    NEWSLETTER_LEASE_MS: "2000",
    PUBLIC_BASE_URL: "https://news.example.test",
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

const newSite = async (opts: { published?: boolean } = {}) => {
  const slug = `n-${uniq()}`;
  const res = await h.call("POST", "/api/v1/sites", { key: owner.key, body: { name: "Garden News", slug } });
  const id = ((await res.json()) as Json).site.id as string;
  if (opts.published) await setSitePublished(h.ctx, await siteById(h.ctx, id), true);
  return { id, slug };
};
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  h.call(method, path, { key: owner.key, body, headers });
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Json });
const mailsTo = (addr: string) => sink.messages.filter((m) => m.to.includes(addr));
const waitFor = async (what: string, check: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
};
/** The path and query of an absolute URL (the app is called without a host). */
const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
const linkIn = (mail: ReceivedMail, re: RegExp) => {
  const html = String(mail.parsed?.html || "");
  const m = re.exec(html);
  if (!m) throw new Error(`no link ${re} in ${html.slice(0, 500)}`);
  return m[1]!.replace(/&amp;/g, "&");
};
/** A header as it was written (mailparser turns List-* headers into objects). */
const header = (mail: ReceivedMail, name: string) => {
  const line = mail.parsed?.headerLines.find((l) => l.key === name.toLowerCase())?.line;
  return line === undefined
    ? undefined
    : line
        .slice(line.indexOf(":") + 1)
        .replace(/\r?\n\s+/g, " ")
        .trim();
};
const addSubscribers = async (siteId: string, emails: string[]) => {
  const r = await json(
    await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      subscribers: emails.map((email) => ({ email })),
    }),
  );
  expect(r.status).toBe(200);
};
const campaignHtml = (key: string) =>
  `<h1>Spring</h1><p>New seeds are in.</p><img src="/api/media/${key}" alt="Seeds"><p><a href="https://example.com/shop">Shop</a></p>`;

describe("subscribers", () => {
  test("every subscriber and campaign route keeps the authorization rules", async () => {
    const { id } = await newSite();
    for (const r of [
      { method: "GET", path: `/api/v1/sites/${id}/subscribers`, scope: "content:read" },
      {
        method: "POST",
        path: `/api/v1/sites/${id}/subscribers`,
        scope: "content:write",
        body: { email: "a@example.com" },
      },
      { method: "GET", path: `/api/v1/sites/${id}/campaigns`, scope: "content:read" },
      {
        method: "POST",
        path: `/api/v1/sites/${id}/campaigns`,
        scope: "content:write",
        body: { subject: "s", html: "<p>x</p>" },
      },
    ] as const)
      await expectAuthRules(h, r);
    const other = await h.seedOrg();
    const res = await h.call("GET", `/api/v1/sites/${id}/subscribers`, { key: other.key });
    expect(res.status).toBe(404);
  });

  test("one address is added once: normalised (trimmed, lowercased), a second add updates its name", async () => {
    const { id } = await newSite();
    const a = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, { email: "  Ada@Example.COM ", name: "Ada" }),
    );
    expect(a.status).toBe(201);
    expect(a.body.subscriber).toMatchObject({ email: "ada@example.com", name: "Ada", status: "active" });
    const b = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, { email: "ada@example.com", name: "Ada L." }),
    );
    expect(b.status).toBe(200);
    expect(b.body.subscriber).toMatchObject({ id: a.body.subscriber.id, name: "Ada L." });
    const bad = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, { email: "not-an-address" }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
  });

  test("a CSV import with malformed rows answers 400 listing each row and stores nothing; skipInvalid imports the rest", async () => {
    const { id } = await newSite();
    const csv =
      'email,name\nann@example.com,Ann\nnope,Bad\n"bob@example.com","Bob, Jr."\n@x.org,Worse\nANN@example.com,Ann B\n';
    const headers = { "content-type": "text/csv" };
    const bad = await json(await call("POST", `/api/v1/sites/${id}/subscribers`, csv, headers));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
    expect(bad.body.error.details.map((d: Json) => d.row)).toEqual([3, 5]);
    expect(bad.body.error.details[0].message).toContain("nope");
    const none = await json(await call("GET", `/api/v1/sites/${id}/subscribers`));
    expect(none.body.subscribers).toEqual([]);
    const ok = await json(await call("POST", `/api/v1/sites/${id}/subscribers?skipInvalid=1`, csv, headers));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      imported: 2,
      updated: 0,
      invalid: [
        { row: 3, reason: expect.stringContaining("nope") },
        { row: 5, reason: expect.stringContaining("@x.org") },
      ],
    });
    const list = await json(await call("GET", `/api/v1/sites/${id}/subscribers`));
    expect(list.body.subscribers.map((s: Json) => [s.email, s.name]).sort()).toEqual([
      ["ann@example.com", "Ann B"],
      ["bob@example.com", "Bob, Jr."],
    ]);

    const asJson = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, { csv: "email\ncy@example.com\n" }),
    );
    expect(asJson.body).toEqual({ imported: 1, updated: 0, invalid: [] });
    const two = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, { email: "a@example.com", csv: "email\n" }),
    );
    expect(two.status).toBe(400);
    const none2 = await json(await call("POST", `/api/v1/sites/${id}/subscribers`, {}));
    expect(none2.status).toBe(400);
    const noColumn = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, "mail\nx@example.com\n", headers),
    );
    expect(noColumn.status).toBe(400);
    const unclosed = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, 'email\n"x@example.com\n', headers),
    );
    expect(unclosed.status).toBe(400);
    expect(unclosed.body.error.message).toContain("line 2");
  });

  test("a JSON import upserts by address; the list pages by cursor and filters by status; delete answers 204", async () => {
    const { id } = await newSite();
    const emails = Array.from({ length: 5 }, (_, i) => `p${i}@example.com`);
    await addSubscribers(id, emails);
    const again = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, {
        subscribers: [{ email: "P0@example.com" }, { email: "new@example.com" }],
      }),
    );
    expect(again.body).toEqual({ imported: 1, updated: 1, invalid: [] });
    const page1 = await json(await call("GET", `/api/v1/sites/${id}/subscribers?limit=4`));
    expect(page1.body.subscribers).toHaveLength(4);
    const page2 = await json(
      await call("GET", `/api/v1/sites/${id}/subscribers?limit=4&cursor=${page1.body.nextCursor}`),
    );
    expect(page2.body.subscribers).toHaveLength(2);
    expect(page2.body.nextCursor).toBeNull();
    const pending = await json(await call("GET", `/api/v1/sites/${id}/subscribers?status=pending`));
    expect(pending.body.subscribers).toEqual([]);
    const wrong = await json(await call("GET", `/api/v1/sites/${id}/subscribers?status=gone`));
    expect(wrong.status).toBe(400);
    const sid = page1.body.subscribers[0].id;
    expect((await call("DELETE", `/api/v1/sites/${id}/subscribers/${sid}`)).status).toBe(204);
    expect((await call("DELETE", `/api/v1/sites/${id}/subscribers/${sid}`)).status).toBe(404);
  });
});

describe("public subscribe, double opt-in and unsubscribe", () => {
  test("subscribe answers 202 the same for a new, a pending and an active address; the confirm link activates", async () => {
    const site = await newSite({ published: true });
    const email = `reader-${uniq()}@example.net`;
    const sub = (addr: string) =>
      h.call("POST", `/api/v1/public/sites/${site.slug}/subscribe`, { body: { email: addr } });
    const first = await json(await sub(email));
    expect(first.status).toBe(202);
    await waitFor("the confirmation mail", () => mailsTo(email).length === 1);
    const mail = mailsTo(email)[0]!;
    expect(mail.parsed?.subject).toContain("Confirm");
    expect(header(mail, "List-Unsubscribe")).toBeUndefined();
    const pendingList = await json(await call("GET", `/api/v1/sites/${site.id}/subscribers?status=pending`));
    expect(pendingList.body.subscribers.map((s: Json) => s.email)).toEqual([email]);
    // A pending address again: the same answer, no second mail within 10 minutes.
    const second = await json(await sub(email.toUpperCase()));
    expect(second).toEqual(first);
    const link = linkIn(mail, /href="([^"]*\/newsletter\/confirm\?token=[^"]+)"/);
    expect(link.startsWith("https://news.example.test/api/v1/public/newsletter/confirm?token=")).toBe(true);
    const confirmed = await h.call("GET", local(link));
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("confirmed");
    const active = await json(await call("GET", `/api/v1/sites/${site.id}/subscribers?status=active`));
    expect(active.body.subscribers.map((s: Json) => s.email)).toEqual([email]);
    // Active now: the same answer again, and nothing is mailed.
    const third = await json(await sub(email));
    expect(third).toEqual(first);
    // An unknown address answers alike.
    expect(await json(await sub(`other-${uniq()}@example.net`))).toEqual(first);
    await Bun.sleep(200);
    expect(mailsTo(email)).toHaveLength(1);
    const forged = await h.call(
      "GET",
      `/api/v1/public/newsletter/confirm?token=${encodeURIComponent(`${new URL(link).searchParams.get("token")!}x`)}`,
    );
    expect(forged.status).toBe(400);
  });

  test("an unpublished site answers 404; a malformed address 400; the sixth sign-up of one address in an hour 429", async () => {
    const hidden = await newSite();
    const r = await h.call("POST", `/api/v1/public/sites/${hidden.slug}/subscribe`, {
      body: { email: "x@example.com" },
    });
    expect(r.status).toBe(404);
    const site = await newSite({ published: true });
    const bad = await h.call("POST", `/api/v1/public/sites/${site.slug}/subscribe`, {
      body: { email: "x@@example" },
    });
    expect(bad.status).toBe(400);
    const email = `many-${uniq()}@example.net`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (await h.call("POST", `/api/v1/public/sites/${site.slug}/subscribe`, { body: { email } })).status,
      );
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  });
});

describe("campaigns", () => {
  test("a body naming unknown, foreign or displayUrl media, outside images or scripts answers 400 listing each", async () => {
    const { id } = await newSite();
    const other = await newSite();
    const mine = await addLibraryFile(h.ctx, { siteId: id, bytes: sampleImage("png"), source: "upload" });
    const theirs = await addLibraryFile(h.ctx, {
      siteId: other.id,
      bytes: sampleImage("png"),
      source: "upload",
    });
    const display = grantMemberUrl(h.ctx, id, mine.key);
    const html = [
      `<p><img src="/api/media/site-media/${id}/invented.png"></p>`,
      `<p><img src="${display}"></p>`,
      `<p><img src="https://cdn.example.com/x.jpg"></p>`,
      `<p><img src="${theirs.url}"></p>`,
      `<div style="background:url('/api/media/site-media/${id}/bg.png')">x</div>`,
      `<p onclick="steal()">y</p><script>alert(1)</script>`,
    ].join("\n");
    const r = await json(await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "S", html }));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    const got = r.body.error.details.map((d: Json) => [d.line, d.message.split(":")[0]]);
    expect(got).toEqual([
      [1, "unknown file"],
      [2, "a displayUrl (signed with k or t)"],
      [3, "an outside image"],
      [4, "another site's file"],
      [5, "unknown file"],
      [6, "event handler attributes are not allowed in mail"],
      [6, "scripts are not allowed in mail"],
    ]);
    const list = await json(await call("GET", `/api/v1/sites/${id}/campaigns`));
    expect(list.body.campaigns).toEqual([]);
    const empty = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "", html: "<p>x</p>" }),
    );
    expect(empty.status).toBe(400);
  });

  test("the draft reads member-signed; stored bare; the preview serves bare paths that open with a session cookie only", async () => {
    const { id } = await newSite();
    const file = await addLibraryFile(h.ctx, { siteId: id, bytes: sampleImage("png"), source: "upload" });
    const created = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns`, {
        subject: "Spring",
        preheader: "Seeds are in",
        fromName: "Garden",
        html: `<img src="https://news.example.test/api/media/${file.key}" srcset="/api/media/${file.key} 2x">`,
      }),
    );
    expect(created.status).toBe(201);
    const c = created.body.campaign;
    expect(c).toMatchObject({
      status: "draft",
      subject: "Spring",
      counts: { queued: 0, sent: 0, failed: 0, bounced: 0, refusedByPolicy: 0 },
    });
    const read = await json(await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}`));
    const signed = [...read.body.campaign.html.matchAll(/\/api\/media\/[^"\s]+/g)].map(
      (m: RegExpMatchArray) => m[0],
    );
    expect(signed).toHaveLength(2);
    for (const u of signed) {
      expect(u).toMatch(/\?k=m\./);
      expect((await h.call("GET", u.replace(/&amp;/g, "&"))).status).toBe(200);
    }
    const preview = await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}/preview`);
    expect(preview.status).toBe(200);
    expect(preview.headers.get("content-type")).toContain("text/html");
    const csp = preview.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    const page = await preview.text();
    expect(page).toContain(`src="/api/media/${file.key}"`);
    expect(page).toContain("Seeds are in");
    expect(page).not.toContain("?k=");
    const bare = `/api/media/${file.key}`;
    expect((await h.call("GET", bare)).status).toBe(403);
    const session = await createUserSession(h.ctx, owner.user.id);
    expect((await h.call("GET", bare, { headers: { cookie: session.cookie } })).status).toBe(200);
    const stranger = await h.seedOrg();
    const theirs = await createUserSession(h.ctx, stranger.user.id);
    expect((await h.call("GET", bare, { headers: { cookie: theirs.cookie } })).status).toBe(403);
  });

  test("send: a sendAt in the past, an empty list, and cancelling what is not scheduled answer 400", async () => {
    const { id } = await newSite();
    const c = (
      await json(await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "S", html: "<p>Hi</p>" }))
    ).body.campaign;
    const empty = await json(await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`, {}));
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain("no active subscriber");
    await addSubscribers(id, [`s-${uniq()}@example.com`]);
    const past = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`, {
        sendAt: new Date(Date.now() - 60_000).toISOString(),
      }),
    );
    expect(past.status).toBe(400);
    expect(past.body.error.details[0].field).toBe("sendAt");
    const cancelDraft = await json(await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/cancel`));
    expect(cancelDraft.status).toBe(400);
    const later = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`, {
        sendAt: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    );
    expect(later.status).toBe(202);
    expect(later.body.campaign.status).toBe("scheduled");
    const edit = await json(await call("PATCH", `/api/v1/sites/${id}/campaigns/${c.id}`, { subject: "T" }));
    expect(edit.status).toBe(400);
    const cancelled = await json(await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/cancel`));
    expect(cancelled.body.campaign.status).toBe("cancelled");
    const back = await json(await call("PATCH", `/api/v1/sites/${id}/campaigns/${c.id}`, { subject: "T" }));
    expect(back.body.campaign).toMatchObject({ status: "draft", subject: "T" });
    expect((await call("DELETE", `/api/v1/sites/${id}/campaigns/${c.id}`)).status).toBe(204);
  });

  test("a scheduled campaign starts when due (the sweep) and ends sent", async () => {
    const { id } = await newSite();
    const email = `due-${uniq()}@example.com`;
    await addSubscribers(id, [email]);
    const c = (
      await json(await call("POST", `/api/v1/sites/${id}/campaigns`, { subject: "Due", html: "<p>Now</p>" }))
    ).body.campaign;
    const r = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`, {
        sendAt: new Date(Date.now() + 1000).toISOString(),
      }),
    );
    expect(r.body.campaign.status).toBe("scheduled");
    await waitFor("the scheduled mail", () => mailsTo(email).length === 1);
    await waitFor(
      "sent",
      async () =>
        (await json(await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}`))).body.campaign.status ===
        "sent",
    );
  });
});

describe("sending through SMTP", () => {
  test("each mail's images open with their t token and no cookie until the token expires; text part and one-click headers; a 550 bounces", async () => {
    const { id } = await newSite();
    const file = await addLibraryFile(h.ctx, { siteId: id, bytes: sampleImage("png"), source: "upload" });
    const readers = [`r1-${uniq()}@example.com`, `r2-${uniq()}@example.com`, DEFERRED];
    await addSubscribers(id, [...readers, BOUNCING]);
    const c = (
      await json(
        await call("POST", `/api/v1/sites/${id}/campaigns`, {
          subject: "Spring",
          preheader: "Seeds",
          fromName: "Garden",
          html: campaignHtml(file.key),
        }),
      )
    ).body.campaign;
    const test1 = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/test`, { to: ["editor@example.com"] }),
    );
    expect(test1.status).toBe(202);
    await waitFor("the test mail", () =>
      mailsTo("editor@example.com").some((m) => m.parsed?.subject === "[Test] Spring"),
    );
    const badTest = await json(
      await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/test`, { to: ["nope"] }),
    );
    expect(badTest.status).toBe(400);

    const sent = await json(await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`));
    expect(sent.status).toBe(202);
    expect(sent.body.campaign.status).toBe("sending");
    // Every recipient is counted; the sender may already have finished one (the 550 bounces at once)
    // before the answer reads the counts.
    const counts = sent.body.campaign.counts;
    expect(counts.queued + counts.sent + counts.failed + counts.bounced + counts.refusedByPolicy).toBe(4);
    expect(counts.queued).toBeGreaterThanOrEqual(1);
    const final = async () =>
      (await json(await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}`))).body.campaign;
    const tokens: string[] = [];
    // Each mail is checked as it arrives: the deferred address answers 451 once and is retried
    // after the catalog's backoff (5 s), while the tokens of this file live 8 s.
    for (const email of readers) {
      await waitFor(
        `the mail to ${email}`,
        () => mailsTo(email).some((m) => m.parsed?.subject === "Spring"),
        30_000,
      );
      const got = mailsTo(email).filter((m) => m.parsed?.subject === "Spring");
      expect(got).toHaveLength(1);
      const mail = got[0]!;
      expect(mail.parsed!.from?.value[0]).toMatchObject({ name: "Garden" });
      expect(String(mail.parsed!.text)).toContain("New seeds are in.");
      expect(String(mail.parsed!.text)).toContain("Shop (https://example.com/shop)");
      const unsub = String(header(mail, "List-Unsubscribe"));
      expect(unsub).toMatch(
        /^<https:\/\/news\.example\.test\/api\/v1\/public\/newsletter\/unsubscribe\?token=[^>]+>$/,
      );
      expect(header(mail, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
      const images = [...String(mail.parsed!.html).matchAll(/<img[^>]+src="([^"]+)"/g)].map((m) =>
        m[1]!.replace(/&amp;/g, "&"),
      );
      expect(images).toHaveLength(1);
      for (const src of images) {
        expect(src.startsWith(`https://news.example.test/api/media/${file.key}?t=`)).toBe(true);
        const res = await h.call("GET", local(src));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("image/png");
        tokens.push(src);
      }
    }
    await waitFor("the campaign to end", async () => (await final()).status === "sent", 30_000);
    const done = await final();
    expect(done.counts).toEqual({ queued: 0, sent: 3, failed: 0, bounced: 1, refusedByPolicy: 0 });
    const bounced = await json(await call("GET", `/api/v1/sites/${id}/subscribers?status=bounced`));
    expect(bounced.body.subscribers.map((s: Json) => s.email)).toEqual([BOUNCING]);
    // Share tokens expire (NEWSLETTER_MEDIA_TOKEN_TTL_S=8 here): then the same URL is refused.
    for (const src of tokens) {
      // A campaign media token: n.<campaign>.<generation>.<expiry>.<sig> (decision 1115).
      const exp = Number(new URL(src).searchParams.get("t")!.split(".")[3]);
      expect(exp * 1000 - Date.now()).toBeLessThanOrEqual(TOKEN_TTL_S * 1000);
      await waitFor(
        "the share token to expire",
        async () => (await h.call("GET", local(src))).status === 403,
        (TOKEN_TTL_S + 8) * 1000,
      );
    }
    expect(mailsTo(BOUNCING)).toEqual([]);
  }, 60_000);

  test("unsubscribing by the mail's link and by one-click POST changes the status; neither they nor a bounced address are mailed again", async () => {
    const { id } = await newSite();
    const byLink = `link-${uniq()}@example.com`;
    const byPost = `post-${uniq()}@example.com`;
    const stays = `stay-${uniq()}@example.com`;
    await addSubscribers(id, [byLink, byPost, stays, BOUNCING]);
    // Each send names who must get it: a delivery is recorded just before its end-of-data mark (decision
    // 1102), so the server may still be taking a message in when the campaign reads "sent".
    const send = async (subject: string, to: string[]) => {
      const c = (
        await json(await call("POST", `/api/v1/sites/${id}/campaigns`, { subject, html: "<p>Hello</p>" }))
      ).body.campaign;
      expect((await call("POST", `/api/v1/sites/${id}/campaigns/${c.id}/send`)).status).toBe(202);
      await waitFor(
        `${subject} sent`,
        async () =>
          (await json(await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}`))).body.campaign.status ===
          "sent",
      );
      await waitFor(`${subject} received`, () =>
        to.every((addr) => mailsTo(addr).some((m) => m.parsed?.subject === subject)),
      );
      return (await json(await call("GET", `/api/v1/sites/${id}/campaigns/${c.id}`))).body.campaign;
    };
    const first = await send(`First ${uniq()}`, [byLink, byPost, stays]);
    expect(first.counts).toEqual({ queued: 0, sent: 3, failed: 0, bounced: 1, refusedByPolicy: 0 });
    // By link: the page (a GET changes nothing), then its button (a form POST).
    const linkMail = mailsTo(byLink).find((m) => m.parsed?.subject === first.subject)!;
    const link = linkIn(linkMail, /href="([^"]*\/newsletter\/unsubscribe\?token=[^"]+)"/);
    const pageRes = await h.call("GET", local(link));
    expect(pageRes.status).toBe(200);
    const pageHtml = await pageRes.text();
    expect(pageHtml).toContain('method="post"');
    const still = await json(await call("GET", `/api/v1/sites/${id}/subscribers?status=active`));
    expect(still.body.subscribers.map((s: Json) => s.email)).toContain(byLink);
    const action = /action="([^"]+)"/.exec(pageHtml)![1]!.replace(/&amp;/g, "&");
    const clicked = await h.call("POST", action, {
      body: "List-Unsubscribe=One-Click",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
    });
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain("Unsubscribed");
    // One-click (RFC 8058): what a mail client POSTs to the List-Unsubscribe URL.
    const postMail = mailsTo(byPost).find((m) => m.parsed?.subject === first.subject)!;
    const target = String(header(postMail, "List-Unsubscribe")).slice(1, -1);
    const oneClick = await h.call("POST", local(target), {
      body: "List-Unsubscribe=One-Click",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(await json(oneClick)).toEqual({ status: 200, body: { unsubscribed: true } });
    const gone = await json(await call("GET", `/api/v1/sites/${id}/subscribers?status=unsubscribed`));
    expect(gone.body.subscribers.map((s: Json) => s.email).sort()).toEqual([byLink, byPost].sort());
    // An import does not bring them back.
    const reimport = await json(
      await call("POST", `/api/v1/sites/${id}/subscribers`, {
        subscribers: [{ email: byLink }, { email: BOUNCING }],
      }),
    );
    expect(reimport.body).toMatchObject({ imported: 0, updated: 2 });
    const second = await send(`Second ${uniq()}`, [stays]);
    expect(second.counts).toEqual({ queued: 0, sent: 1, failed: 0, bounced: 0, refusedByPolicy: 0 });
    for (const addr of [byLink, byPost, BOUNCING])
      expect(
        sink.messages.filter((m) => m.to.includes(addr) && m.parsed?.subject === second.subject),
      ).toEqual([]);
    expect(mailsTo(stays).filter((m) => m.parsed?.subject === second.subject)).toHaveLength(1);
    const rows = await h.db
      .select()
      .from(newsletterRecipients)
      .where(eq(newsletterRecipients.campaignId, second.id));
    expect(rows.map((r) => r.email)).toEqual([stays]);
  });
});
