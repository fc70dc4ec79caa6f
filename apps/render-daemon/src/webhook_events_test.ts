import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  buildTestApp,
  runtimeOf,
  startWebhookReceiver,
  type TestApp,
  verifyHook,
  type WebhookReceiver,
} from "@site/api/testing";
import { html, LANDING, servePages } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { findFfmpeg } from "@site/domain/screenshots";
import { sampleImage } from "@site/domain/testing";
import { createBullQueue, type JobQueue } from "@site/queue";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

// Events fired by the real actions, delivered by the daemon's dispatcher from jobs on BullMQ (Redis).
const redisUrl = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
const pages = servePages({ "/": () => html(LANDING) });
let rx: WebhookReceiver;
let closedPort: number;
let queue: JobQueue;
let h: TestApp;
let daemon: RenderDaemon;

beforeAll(async () => {
  rx = startWebhookReceiver();
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  closedPort = probe.port as number;
  probe.stop(true);
  queue = createBullQueue({
    redisUrl,
    log: createLogger("silent" as never),
    prefix: `webhook-test-${Date.now().toString(36)}`,
  });
  h = await buildTestApp({
    queue,
    env: {
      FETCH_ALLOW_HOSTS: `${pages.host},${rx.host},127.0.0.1:${closedPort}`,
      WEBHOOK_SWEEP_EVERY_MS: "100",
      RENDER_CONCURRENCY: "2",
      RENDER_METRICS_PORT: "0",
    },
  });
  daemon = await startRenderDaemon(runtimeOf(h), { warm: false });
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
  rx?.stop();
  pages.stop();
});

async function orgWithHook(path: string, events: string[]) {
  const o = await h.seedOrg({
    credits: 100,
    scopes: ["webhooks:write", "sites:write", "content:read", "content:write", "social:write"],
  });
  const res = await h.call("POST", "/api/v1/webhooks", { key: o.key, body: { url: rx.url(path), events } });
  expect(res.status).toBe(201);
  const { secret } = (await res.json()) as { secret: string };
  const site = await h.newSite(o.key);
  return { ...o, secret, siteId: site.id };
}

describe("events fired by the real actions (BullMQ queue, the daemon's dispatcher)", () => {
  test("screenshot.completed carries the render as its GET answers it", async () => {
    const o = await orgWithHook("/shot", ["screenshot.completed", "screenshot.failed"]);
    const res = await h.call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, {
      key: o.key,
      body: { url: `http://${pages.host}/` },
    });
    expect(res.status).toBe(202);
    const { renderId } = (await res.json()) as { renderId: string };
    const [hook] = await rx.waitFor("/shot", 1, 90_000);
    const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe("screenshot.completed");
    const got = (await (
      await h.call("GET", `/api/v1/sites/${o.siteId}/media/screenshot/${renderId}`, { key: o.key })
    ).json()) as Record<string, unknown>;
    const { displayUrl: _a, ...sent } = payload.data;
    const { displayUrl: _b, ...read } = got;
    expect(sent).toEqual(read);
    expect(payload.data.status).toBe("done");
    expect(String(payload.data.displayUrl)).toStartWith(String(got.imageUrl));
  }, 120_000);

  test("screenshot.failed when the page cannot be reached", async () => {
    const o = await orgWithHook("/shot-failed", ["screenshot.failed"]);
    const res = await h.call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, {
      key: o.key,
      body: { url: `http://127.0.0.1:${closedPort}/` },
    });
    expect(res.status).toBe(202);
    const [hook] = await rx.waitFor("/shot-failed", 1, 90_000);
    const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe("screenshot.failed");
    expect(payload.data).toMatchObject({ status: "failed", imageUrl: null });
    expect(payload.data.error).toBeString();
  }, 120_000);

  test.skipIf(!findFfmpeg(null))(
    "clip.completed carries the clip as its GET answers it; clip.failed when its page cannot be reached",
    async () => {
      const o = await orgWithHook("/clip", ["clip.completed", "clip.failed"]);
      await h.call("POST", "/api/v1/webhooks", {
        key: o.key,
        body: { url: rx.url("/clip-none"), events: ["screenshot.completed"] },
      });
      const clip = async (url: string) => {
        const res = await h.call("POST", "/api/v1/social/media/clips", {
          key: o.key,
          body: { url, motion: "scroll", durationS: 2, fps: 24, width: 400, height: 500 },
        });
        expect(res.status).toBe(202);
        return ((await res.json()) as { clipId: string }).clipId;
      };
      const done = await clip(`http://${pages.host}/`);
      const [hook] = await rx.waitFor("/clip", 1, 110_000);
      const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
      expect(payload.type).toBe("clip.completed");
      const got = (await (
        await h.call("GET", `/api/v1/social/media/clips/${done}`, { key: o.key })
      ).json()) as Record<string, unknown>;
      const strip = (v: Record<string, unknown>) =>
        JSON.parse(JSON.stringify(v, (k, x) => (k === "thumbnailUrl" || k === "posterUrl" ? undefined : x)));
      expect(strip(payload.data)).toEqual(strip(got));
      expect(payload.data).toMatchObject({ clipId: done, status: "done" });

      const failed = await clip(`http://127.0.0.1:${closedPort}/`);
      const hooks = await rx.waitFor("/clip", 2, 110_000);
      const second = verifyHook(o.secret, hooks[1]!) as { type: string; data: Record<string, unknown> };
      expect(second.type).toBe("clip.failed");
      expect(second.data).toMatchObject({ clipId: failed, status: "failed" });
      expect(second.data.error).toBeString();
      // the endpoint subscribed to other events hears nothing of clips
      expect(rx.to("/clip-none")).toEqual([]);
    },
    240_000,
  );

  test("media.created when an uploaded file lands, with the entry as the library lists it", async () => {
    const o = await orgWithHook("/media", ["media.created"]);
    const bytes = sampleImage("png", { width: 4, height: 3, size: 256 });
    const prep = await h.call("POST", `/api/v1/sites/${o.siteId}/media/upload`, {
      key: o.key,
      body: { contentType: "image/png", size: bytes.length },
    });
    expect(prep.status).toBe(201);
    const { upload } = (await prep.json()) as { upload: { url: string; headers: Record<string, string> } };
    const put = await h.app.handle(
      new Request(upload.url.replace(/^https?:\/\/[^/]+/, "http://localhost"), {
        method: "PUT",
        headers: upload.headers,
        body: bytes,
      }),
    );
    expect(put.status).toBeLessThan(300);
    const [hook] = await rx.waitFor("/media");
    const payload = verifyHook(o.secret, hook!) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe("media.created");
    const list = (await (await h.call("GET", `/api/v1/sites/${o.siteId}/media`, { key: o.key })).json()) as {
      images: Record<string, unknown>[];
    };
    const { displayUrl: _a, siteId, ...sent } = payload.data;
    const { displayUrl: _b, ...listed } = list.images[0]!;
    expect(siteId).toBe(o.siteId);
    expect(sent).toEqual(listed);
  });

  test("site.published goes through a webhook-delivery job on BullMQ", async () => {
    const o = await orgWithHook("/bull", ["site.published"]);
    await h.call("POST", `/api/v1/sites/${o.siteId}/publish`, { key: o.key });
    const [hook] = await rx.waitFor("/bull");
    verifyHook(o.secret, hook!);
    const stats = await queue.stats("webhook-delivery");
    expect(stats.completed + stats.active).toBeGreaterThanOrEqual(1);
  });

  test("the daemon's /metrics shows its webhook tries by event and outcome, beside the render counters", async () => {
    const metrics = async () => {
      const res = await fetch(daemon.metricsUrl!.replace("0.0.0.0", "127.0.0.1"));
      expect(res.status).toBe(200);
      return res.text();
    };
    const count = (text: string, labels: string) =>
      Number(new RegExp(`^webhook_deliveries_total\\{${labels}\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const delivered = 'event="site.published",outcome="delivered"';
    const refused = 'event="site.published",outcome="network"';
    const before = await metrics();
    expect(before).toContain("# TYPE renders_total counter");
    expect(before).toContain("# TYPE webhook_deliveries_total counter");

    const ok = await orgWithHook("/metrics-ok", ["site.published"]);
    await h.call("POST", `/api/v1/sites/${ok.siteId}/publish`, { key: ok.key });
    await rx.waitFor("/metrics-ok");
    const bad = await h.seedOrg({ scopes: ["webhooks:write", "sites:write"] });
    const hook = await h.call("POST", "/api/v1/webhooks", {
      key: bad.key,
      body: { url: `http://127.0.0.1:${closedPort}/refused`, events: ["site.published"] },
    });
    expect(hook.status).toBe(201);
    const site = await h.newSite(bad.key);
    await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: bad.key });
    let after = await metrics();
    for (let i = 0; i < 100 && count(after, refused) <= count(before, refused); i++) {
      await Bun.sleep(100);
      after = await metrics();
    }
    expect(count(after, delivered)).toBeGreaterThan(count(before, delivered));
    expect(count(after, refused)).toBeGreaterThan(count(before, refused));
    expect(after).toMatch(
      /^webhook_delivery_duration_seconds_count\{event="site.published",outcome="delivered"\} [1-9]/m,
    );
    expect(after).toMatch(/^webhook_event_to_delivery_seconds_count\{event="site.published"\} [1-9]/m);
  });
});
