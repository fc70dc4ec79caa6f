import { afterAll, describe, expect, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { findBrowser } from "@site/browser";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { organizations, screenshotRenders, socialMedia } from "@site/db";
import { findFfmpeg } from "@site/domain/screenshots";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { createBullQueue } from "@site/queue";
import { eq, inArray } from "drizzle-orm";
import { type RedisProcess, startRedisServer } from "../testing/processes.ts";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

// Issue 38, "Redis lost, work lost" (decision 1441): a Redis server of this test's own, SIGKILLed and
// started again empty while a campaign sends (to a real SMTP server on loopback), a second campaign is
// scheduled and two clips are being filmed. Without any restart of the daemon: the campaign finishes,
// the scheduled one starts (the recurring newsletter sweep is created again), and each clip is rendered
// and listed once (the sweeper does not re-queue a job its live host is still running).
const canClip = Boolean(findBrowser(null) && findFfmpeg(null));
const RECIPIENTS = 120;
const KILLED_AT = 42;
type Json = any;

describe.skipIf(!canClip)("Redis SIGKILLed and back empty while work is in flight", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse())
      await Promise.resolve()
        .then(c)
        .catch(() => {});
  });

  test("the campaign finishes, the scheduled one starts, each clip is listed once, without a restart", async () => {
    const redis: RedisProcess = await startRedisServer();
    cleanup.push(() => redis.stop());
    // Deliveries stop at the RCPT of mail KILLED_AT + 1 until Redis is back.
    const sink: SmtpSink = await startSmtpSink({ parse: true });
    cleanup.push(() => sink.close());
    let redisBack: () => void = () => {};
    const back = new Promise<void>((r) => {
      redisBack = r;
    });
    sink.holdRcpt = async () => {
      if (sink.count >= KILLED_AT) await back;
    };
    // The two clips' pages answer once released: both clips are mid-film while Redis is lost.
    let releasePages: () => void = () => {};
    const pagesReleased = new Promise<void>((r) => {
      releasePages = r;
    });
    const hits = new Map<string, number>();
    const pages = servePages(
      {
        "/clip": async (req) => {
          const n = new URL(req.url).searchParams.get("n") ?? "";
          hits.set(n, (hits.get(n) ?? 0) + 1);
          await pagesReleased;
          return html(LANDING);
        },
      },
      { idleTimeout: 0 },
    );
    cleanup.push(() => pages.stop());

    const log = createLogger("silent" as never);
    const prefix = `redislost-${Date.now().toString(36)}`;
    const queue = createBullQueue({ redisUrl: redis.url, log, prefix, lockDurationMs: 2000 });
    const h: TestApp = await buildTestApp({
      queue,
      env: {
        FETCH_ALLOW_HOSTS: pages.host,
        SMTP_URL: sink.url,
        SMTP_RATE_PER_MINUTE: "0",
        NEWSLETTER_LEASE_MS: "3000",
        NEWSLETTER_SWEEP_EVERY_MS: "1000",
        PUBLIC_BASE_URL: "https://news.example.test",
        MAIL_BOUNCE_ADDRESS: "bounces@news.example.test",
        RENDER_JOB_LOCK_MS: "2000",
        RENDER_SWEEP_EVERY_MS: "300",
        RENDER_CONCURRENCY: "4",
        RENDER_ORG_CONCURRENCY: "4",
        RENDER_PAGE_DEADLINE_MS: "120000",
      },
    });
    cleanup.push(() => h.close());
    const daemon: RenderDaemon = await startRenderDaemon(runtimeOf(h), { warm: false });
    cleanup.push(() => daemon.stop());

    const o = await h.seedOrg({ credits: 200, siteLimit: 10 });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await h.call(method, path, { key: o.key, body });
      return { status: res.status, body: (await res.json().catch(() => null)) as Json };
    };
    /** A site with these subscribers and a campaign, sent now or `inMs` from the send request. */
    const campaign = async (emails: string[], inMs?: number) => {
      const site = await call("POST", "/api/v1/sites", { name: "News", slug: `n-${crypto.randomUUID()}` });
      const siteId = site.body.site.id as string;
      expect(
        (
          await call("POST", `/api/v1/sites/${siteId}/subscribers`, {
            subscribers: emails.map((email) => ({ email })),
          })
        ).status,
      ).toBe(200);
      const c = await call("POST", `/api/v1/sites/${siteId}/campaigns`, {
        subject: `News ${crypto.randomUUID().slice(0, 8)}`,
        fromName: "Garden Club",
        html: "<p>Hello from the garden</p>",
      });
      const cid = c.body.campaign.id as string;
      const sent = await call(
        "POST",
        `/api/v1/sites/${siteId}/campaigns/${cid}/send`,
        inMs ? { sendAt: new Date(Date.now() + inMs).toISOString() } : undefined,
      );
      expect(sent.status).toBe(202);
      return cid;
    };
    const campaignOf = async (cid: string) =>
      (
        await h.sql`select c.status, (select count(*)::int from newsletter_recipients r
          where r.campaign_id = c.id and r.status = 'sent') as sent
          from newsletter_campaigns c where c.id = ${cid}::uuid`
      )[0] as { status: string; sent: number };

    // Two clips, both being filmed.
    const clipIds: string[] = [];
    for (const n of ["1", "2"]) {
      const res = await call("POST", "/api/v1/social/media/clips", {
        url: pages.url(`/clip?n=${n}`),
        motion: "scroll",
        durationS: 2,
        fps: 24,
        width: 320,
        height: 400,
        viewportWidth: 480,
        viewportHeight: 600,
      });
      expect(res.status).toBe(202);
      clipIds.push(res.body.clipId);
    }
    await until(async () => hits.get("1") && hits.get("2"), 60_000);

    // A campaign sending, and one scheduled a few seconds ahead.
    const sending = await campaign(Array.from({ length: RECIPIENTS }, (_, i) => `reader-${i}@example.org`));
    await until(async () => sink.count >= KILLED_AT, 60_000);
    const scheduled = await campaign(["later@example.org"], 8000);
    expect((await campaignOf(scheduled)).status).toBe("scheduled");

    // Redis is SIGKILLed and comes back empty.
    await redis.kill();
    await redis.restart();
    redisBack();

    // Nothing restarts: the campaign finishes and the scheduled one starts.
    const finished = await until(async () => {
      const c = await campaignOf(sending);
      return c.status === "sent" ? c : null;
    }, 60_000).catch(async () => {
      throw new Error(`the campaign did not finish: ${JSON.stringify(await campaignOf(sending))}`);
    });
    expect(finished.sent).toBe(RECIPIENTS);
    await until(async () => (await campaignOf(scheduled)).status !== "scheduled", 30_000).catch(async () => {
      throw new Error(`the scheduled campaign did not start: ${JSON.stringify(await campaignOf(scheduled))}`);
    });

    // The clips, still mid-film all along, finish: each rendered once and listed once.
    releasePages();
    const rows = await until(async () => {
      const r = await h.db.select().from(screenshotRenders).where(inArray(screenshotRenders.id, clipIds));
      return r.every((x) => x.status !== "pending") ? r : null;
    }, 300_000);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ["done", 1],
      ["done", 1],
    ]);
    expect([hits.get("1"), hits.get("2")]).toEqual([1, 1]);
    await daemon.stop();
    const listed = await h.db.select().from(socialMedia).where(eq(socialMedia.orgId, o.org.id));
    expect(listed.filter((m) => m.kind === "video")).toHaveLength(2);
    expect(listed.filter((m) => m.kind === "image")).toHaveLength(2);
    expect(rows.map((r) => r.mediaId).sort()).toEqual(
      listed
        .filter((m) => m.kind === "video")
        .map((m) => m.id)
        .sort(),
    );
    const [org] = await h.db.select().from(organizations).where(eq(organizations.id, o.org.id));
    expect(org.storageUsedBytes).toBe(listed.reduce((n, m) => n + m.size, 0));
  }, 600_000);
});
