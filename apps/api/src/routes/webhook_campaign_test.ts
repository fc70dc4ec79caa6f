import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { createSmtpMailer, type NewsletterSender, startNewsletterSender } from "@site/domain/newsletters";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { startWebhookDispatcher, type WebhookDispatcher } from "@site/domain/webhooks";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { startWebhookReceiver, verifyHook, type WebhookReceiver } from "../../testing/webhook_receiver.ts";

// newsletter.campaign.sent and .paused, fired by real sends to a real SMTP server (the sink).
let h: TestApp;
let sink: SmtpSink;
let rx: WebhookReceiver;
let sender: NewsletterSender;
let mailer: ReturnType<typeof createSmtpMailer>;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  sink = await startSmtpSink();
  rx = startWebhookReceiver();
  h = await buildTestApp({
    env: { SMTP_URL: sink.url, SMTP_RATE_PER_MINUTE: "0", FETCH_ALLOW_HOSTS: rx.host },
  });
  mailer = createSmtpMailer(sink.url, { connections: 2, log: createLogger("silent" as never) });
  sender = await startNewsletterSender(h.ctx, { mailer, sweepEveryMs: 500 });
  dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
});
afterAll(async () => {
  await dispatcher.stop();
  await sender.stop({ graceMs: 500 });
  await mailer.close();
  await h.close();
  await sink.close();
  rx.stop();
});

async function campaignOf(path: string, type: string) {
  const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read", "content:write"] });
  const hook = await h.call("POST", "/api/v1/webhooks", {
    key: o.key,
    body: { url: rx.url(path), events: [type] },
  });
  const { secret } = (await hook.json()) as { secret: string };
  const site = await h.newSite(o.key);
  await h.call("POST", `/api/v1/sites/${site.id}/subscribers`, {
    key: o.key,
    body: { subscribers: [{ email: `a-${site.slug}@example.com` }, { email: `b-${site.slug}@example.com` }] },
  });
  const c = await h.call("POST", `/api/v1/sites/${site.id}/campaigns`, {
    key: o.key,
    body: { subject: "Hello", html: "<p>Hi</p>" },
  });
  const { campaign } = (await c.json()) as { campaign: { id: string } };
  return { ...o, secret, siteId: site.id, campaignId: campaign.id };
}

describe("newsletter campaign events", () => {
  test("newsletter.campaign.sent carries the campaign as its GET answers it once every mail left", async () => {
    const o = await campaignOf("/sent", "newsletter.campaign.sent");
    const res = await h.call("POST", `/api/v1/sites/${o.siteId}/campaigns/${o.campaignId}/send`, {
      key: o.key,
    });
    expect(res.status).toBe(202);
    const [hook] = await rx.waitFor("/sent", 1, 30_000);
    const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe("newsletter.campaign.sent");
    expect(payload.data).toMatchObject({ id: o.campaignId, status: "sent" });
    expect(payload.data.counts).toMatchObject({ sent: 2, queued: 0 });
  });

  test("newsletter.campaign.paused when the relay refuses the sender, with the reason", async () => {
    const o = await campaignOf("/paused", "newsletter.campaign.paused");
    sink.refuseMailFrom = "550 5.7.1 sender not allowed";
    try {
      await h.call("POST", `/api/v1/sites/${o.siteId}/campaigns/${o.campaignId}/send`, { key: o.key });
      const [hook] = await rx.waitFor("/paused", 1, 30_000);
      const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
      expect(payload.type).toBe("newsletter.campaign.paused");
      expect(payload.data).toMatchObject({ id: o.campaignId, status: "paused" });
      expect(String(payload.data.error)).toContain("sender");
    } finally {
      sink.refuseMailFrom = null;
    }
  });
});
