import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { createSmtpMailer, type NewsletterSender, startNewsletterSender } from "@site/domain/newsletters";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { createBullQueue, type JobQueue } from "@site/queue";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const BOUNCING = "gone@example.org";

let h: TestApp;
let sink: SmtpSink;
let queue: JobQueue;
let sender: NewsletterSender;
let mailer: ReturnType<typeof createSmtpMailer>;
beforeAll(async () => {
  sink = await startSmtpSink({ reject: [BOUNCING] });
  const log = createLogger("silent" as never);
  // Each test file its own queue prefix on the real Redis.
  queue = createBullQueue({ redisUrl, log, prefix: `news-test-${Date.now().toString(36)}` });
  h = await buildTestApp({ queue, env: { SMTP_URL: sink.url, SMTP_RATE_PER_MINUTE: "0" } });
  mailer = createSmtpMailer(sink.url, { connections: 4, log });
  sender = await startNewsletterSender(h.ctx, { mailer, sweepEveryMs: 500 });
});
afterAll(async () => {
  await sender.stop({ graceMs: 500 });
  await mailer.close();
  await h.close();
  await sink.close();
});

describe("newsletters on BullMQ (Redis), like renders", () => {
  test("a send fans out through BullMQ: each active subscriber gets one mail, a 550 bounces, counts add up", async () => {
    const { key } = await h.seedOrg();
    const site = (await (
      await h.call("POST", "/api/v1/sites", {
        key,
        body: { name: "B", slug: `bq-${Date.now().toString(36)}` },
      })
    ).json()) as Json;
    const siteId = site.site.id as string;
    const emails = Array.from({ length: 20 }, (_, i) => `bq${i}@example.com`);
    await h.call("POST", `/api/v1/sites/${siteId}/subscribers`, {
      key,
      body: { subscribers: [...emails, BOUNCING].map((email) => ({ email })) },
    });
    const c = (await (
      await h.call("POST", `/api/v1/sites/${siteId}/campaigns`, {
        key,
        body: { subject: "Queued", html: "<p>Hi</p>" },
      })
    ).json()) as Json;
    const sent = await h.call("POST", `/api/v1/sites/${siteId}/campaigns/${c.campaign.id}/send`, { key });
    expect(sent.status).toBe(202);
    const deadline = Date.now() + 30_000;
    let campaign: Json;
    for (;;) {
      campaign = (
        (await (
          await h.call("GET", `/api/v1/sites/${siteId}/campaigns/${c.campaign.id}`, { key })
        ).json()) as Json
      ).campaign;
      if (campaign.status === "sent" || Date.now() > deadline) break;
      await Bun.sleep(50);
    }
    expect(campaign.status).toBe("sent");
    expect(campaign.counts).toEqual({ queued: 0, sent: 20, failed: 0, bounced: 1, refusedByPolicy: 0 });
    // A delivery is recorded just before its end-of-data mark (decision 1102): the server may still be
    // taking the last message in when the campaign reads "sent".
    await sink.waitFor(emails.length, 10_000);
    const got = sink.messages.flatMap((m) => m.to).sort();
    expect(got).toEqual([...emails].sort());
    // The last job's row is written before BullMQ moves the job to completed: wait for that move.
    let completed = 0;
    for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(50)) {
      completed = (await queue.stats("newsletter-delivery")).completed;
      if (completed >= 21) break;
    }
    expect(completed).toBe(21);
  });
});
