import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { html, LANDING, servePages } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import {
  type Mailer,
  type NewsletterSender,
  openMailer,
  startNewsletterSender,
} from "@site/domain/newsletters";
import { type SmtpSink, sampleImage, startSmtpSink } from "@site/domain/testing";
import { type RenderDaemon, startRenderDaemon } from "@site/render-daemon";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type CallResult, callTool, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, runtimeOf, type TestApp } from "../testing/mod.ts";
import { fetchMediaFromApp } from "../testing/social.ts";

// Issue 36, "Done when": an agent does a whole launch through the official MCP SDK client over
// Streamable HTTP, with no REST call. Real parts throughout: the app behind a Bun server on 127.0.0.1,
// the render daemon with Chromium and FFmpeg filming a page this test serves on 127.0.0.1, an SMTP server
// on 127.0.0.1 receiving the campaign, the strict fake platforms receiving the scheduled post.

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

const pages = servePages({ "/": () => html(LANDING) });
let h: TestApp;
let fake: FakePlatforms;
let sink: SmtpSink;
let mailer: Mailer;
let sender: NewsletterSender;
let daemon: RenderDaemon;
let server: ReturnType<typeof Bun.serve>;
/** Every request the server got: method, path, and whether it carried the agent's bearer key. */
const requests: { method: string; path: string; bearer: string | null }[] = [];

beforeAll(async () => {
  fake = startFakePlatforms();
  sink = await startSmtpSink();
  let app: TestApp | undefined;
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => {
      const url = new URL(req.url);
      requests.push({ method: req.method, path: url.pathname, bearer: req.headers.get("authorization") });
      return app ? app.app.handle(req) : new Response(null, { status: 503 });
    },
  });
  const env = {
    ...fake.env,
    PUBLIC_BASE_URL: `http://127.0.0.1:${server.port}`,
    FETCH_ALLOW_HOSTS: pages.host,
    RENDER_CONCURRENCY: "2",
    RENDER_METRICS_PORT: "0",
    SMTP_URL: sink.url,
    SMTP_RATE_PER_MINUTE: "0",
    NEWSLETTER_SWEEP_EVERY_MS: "200",
    SOCIAL_POLL_INTERVAL_MS: "200",
    SOCIAL_PUBLISH_WAIT_S: "2",
  };
  mailer = openMailer(
    loadConfig({ SECRET_KEY: "test-secret-key-0123456789", DATA_DIR: "/tmp/site-test-data", ...env }),
    createLogger("silent" as never),
    { connections: 2 },
  );
  app = h = await buildTestApp({ env, mailer });
  fetchMediaFromApp(fake, h);
  sender = await startNewsletterSender(h.ctx, { mailer });
  daemon = await startRenderDaemon(runtimeOf(h), { warm: false });
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await sender?.stop({ graceMs: 100 });
  await mailer?.close();
  server?.stop(true);
  await h?.close();
  await sink?.close();
  fake?.close();
  pages.stop();
});

/** The agent's tool calls: every call counted, every error result kept with its tool. */
function agent(client: Client) {
  const calls: string[] = [];
  const errors: { tool: string; result: CallResult }[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    calls.push(name);
    const r = await callTool(client, name, args);
    if (r.isError) errors.push({ tool: name, result: r });
    return r;
  };
  /** A call that must succeed: its structured answer. */
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await call(name, args);
    expect({ tool: name, error: r.isError ? r.content[0]?.text : undefined }).toEqual({
      tool: name,
      error: undefined,
    });
    return r.structuredContent as Json;
  };
  return { calls, errors, call, ok };
}

describe("a whole launch over MCP alone (issue 36)", () => {
  test("site, upload, screenshot, clip, page, publish, campaign over SMTP, account, scheduled post, report: every step a tool call, no REST", async () => {
    const o = await h.seedOrg({ credits: 200 });
    const client = await mcpClient({ base: `http://127.0.0.1:${server.port}` }, o.key, "launch-agent");
    const a = agent(client);
    try {
      // 1. A site.
      const { site } = await a.ok("create_site", {
        name: "Lumen",
        slug: `lumen-${uniq()}`,
        idempotencyKey: `site-${uniq()}`,
      });
      // 2. An image the agent holds.
      const logo = await a.ok("upload_media", {
        siteId: site.id,
        dataBase64: Buffer.from(sampleImage("png", { width: 64, height: 64 })).toString("base64"),
        name: "logo.png",
        alt: "Lumen logo",
      });
      expect(logo.url).toStartWith(`/api/media/site-media/${site.id}/`);

      // 3. A screenshot of a local page, waited for on the server.
      const queued = await a.ok("queue_screenshot", {
        siteId: site.id,
        url: pages.url("/"),
        viewportWidth: 800,
        viewportHeight: 600,
      });
      // A deliberate mistake: a wait over 25 s, refused in words that name the argument.
      const tooLong = await a.call("get_screenshot", {
        siteId: site.id,
        renderId: queued.renderId,
        waitSeconds: 60,
      });
      expect(tooLong.error.code).toBe("VALIDATION_ERROR");
      expect(tooLong.content[0]!.text).toContain("waitSeconds");
      let shot = await a.ok("get_screenshot", {
        siteId: site.id,
        renderId: queued.renderId,
        waitSeconds: 25,
      });
      while (shot.status === "pending")
        shot = await a.ok("get_screenshot", { siteId: site.id, renderId: queued.renderId, waitSeconds: 25 });
      expect(shot).toMatchObject({ status: "done", error: null });
      expect(shot.imageUrl).toStartWith(`/api/media/site-media/${site.id}/`);

      // 4. A device clip, waited for on the server.
      const clipQueued = await a.ok("create_clip", {
        url: pages.url("/"),
        motion: "scroll",
        durationS: 2,
        fps: 24,
        width: 320,
        height: 400,
        viewportWidth: 640,
        viewportHeight: 800,
      });
      let clip = await a.ok("get_clip", { clipId: clipQueued.clipId, waitSeconds: 25 });
      while (clip.status === "pending")
        clip = await a.ok("get_clip", { clipId: clipQueued.clipId, waitSeconds: 25 });
      expect(clip).toMatchObject({ status: "done", error: null, width: 320, height: 400 });
      expect(clip.media).toMatchObject({ kind: "video", contentType: "video/mp4" });

      // 5. A page embedding the upload and the screenshot as the spec's Media blocks; 6. publish.
      const written = await a.ok("create_page", {
        siteId: site.id,
        path: "/launch",
        title: "Launch",
        content: "# Lumen is here",
        media: [
          { url: logo.url, alt: "Lumen logo" },
          { url: shot.imageUrl, alt: "Lumen on a laptop" },
        ],
      });
      for (const [src, alt] of [
        [logo.url, "Lumen logo"],
        [shot.imageUrl, "Lumen on a laptop"],
      ])
        expect(written.page.content).toMatch(
          new RegExp(
            `<Column fillWidth paddingTop="\\w+" paddingBottom="\\w+">\\s*<Column fillWidth>\\s*<Media data-visual-block="image" src="${src.replace(/[.?]/g, "\\$&")}" alt="${alt}"[^>]*/>\\s*</Column>\\s*</Column>`,
          ),
        );
      const published = await a.ok("publish_site", { siteId: site.id });
      expect(published.site.public_content_live).toBe(true);

      // 7. Subscribers and a campaign, sent to the SMTP server.
      const emails = [`ada-${uniq()}@example.org`, `grace-${uniq()}@example.org`];
      for (const email of emails) await a.ok("add_subscriber", { siteId: site.id, email });
      const { campaign } = await a.ok("create_campaign", {
        siteId: site.id,
        subject: `Lumen launches ${uniq()}`,
        html: `<h1>Lumen is here</h1><img src="${shot.imageUrl}" alt="Lumen">`,
      });
      await a.ok("send_campaign", {
        siteId: site.id,
        campaignId: campaign.id,
        idempotencyKey: `send-${uniq()}`,
      });
      let sent = (await a.ok("get_campaign", { siteId: site.id, campaignId: campaign.id, waitSeconds: 25 }))
        .campaign;
      while (sent.status === "sending")
        sent = (await a.ok("get_campaign", { siteId: site.id, campaignId: campaign.id, waitSeconds: 25 }))
          .campaign;
      expect(sent.status).toBe("sent");
      const mails = sink.messages.filter((m) => m.parsed?.subject === campaign.subject);
      expect(mails.flatMap((m) => m.to).sort()).toEqual([...emails].sort());

      // 8. An account of a strict fake platform, from a token the agent holds.
      const { account } = await a.ok("connect_social_account", {
        platform: "x",
        accountId: `x-${uniq()}`,
        accessToken: `tok-${uniq()}`,
        tier: "basic",
      });
      expect((await a.ok("list_social_accounts")).accounts.map((x: Json) => x.id)).toContain(account.id);

      // 9. A post of the clip scheduled a few seconds ahead; a deliberate mistake first (a time past).
      const text = `Lumen is live ${uniq()}`;
      const past = await a.call("create_social_post", {
        content: text,
        accounts: [account.id],
        media: [clip.media.id],
        scheduledAt: new Date(Date.now() - 60_000).toISOString(),
      });
      expect(past.error.code).toBe("VALIDATION_ERROR");
      expect(past.content[0]!.text).toContain("scheduledAt");
      const { post } = await a.ok("create_social_post", {
        content: text,
        accounts: [account.id],
        media: [clip.media.id],
        scheduledAt: new Date(Date.now() + 3000).toISOString(),
        idempotencyKey: `post-${uniq()}`,
      });
      expect(post.status).toBe("scheduled");
      expect(fake.postsWithText("x", text)).toHaveLength(0);

      // 10. Waited for until it is published (the server waits; the agent calls again while it is not).
      let read = (await a.ok("get_social_post", { postId: post.postId, waitSeconds: 25 })).post;
      for (let i = 0; i < 5 && read.targets.some((t: Json) => t.status !== "published"); i++)
        read = (await a.ok("get_social_post", { postId: post.postId, waitSeconds: 25 })).post;
      expect(read.targets.map((t: Json) => [t.status, t.error])).toEqual([["published", null]]);
      expect(fake.postsWithText("x", text)).toHaveLength(1);

      // 11. The performance report: the post and its target (metrics come an hour after publishing).
      const report = await a.ok("get_social_performance", { days: 1 });
      expect(report.posts.map((p: Json) => p.postId)).toEqual([post.postId]);
      expect(report.posts[0].targets).toEqual([
        { platform: "x", accountId: account.id, url: read.targets[0].url, first: null, latest: null },
      ]);

      // The errors are the two this test provoked, and nothing else.
      expect(a.errors.map((e) => e.tool)).toEqual(["get_screenshot", "create_social_post"]);
      const waits = a.calls.filter((c) => c.startsWith("get_")).length;
      expect(a.calls.length - waits).toBe(14);
      // The agent made no REST call: everything it sent with its key went to /mcp (POSTs, and the SDK's
      // one try at GET for a server stream, which a stateless server answers 405).
      const mine = requests.filter((r) => r.bearer === `Bearer ${o.key}`);
      // initialize, its notification and tools/list, then one POST per tool call.
      expect(mine.filter((r) => r.method === "POST").length).toBe(3 + a.calls.length);
      expect([...new Set(mine.map((r) => r.path))]).toEqual(["/mcp"]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
