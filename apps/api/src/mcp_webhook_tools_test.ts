import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startWebhookDispatcher, type WebhookDispatcher } from "@site/domain/webhooks";
import { type AppServer, callTool, listenApp, mcpClient } from "../testing/mcp.ts";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook_receiver.ts";

// The webhook tools that closed the parity table's gaps (issue 36): one endpoint, and one delivery
// sent again, against a receiver on loopback and the real dispatcher.

type Json = any;
let h: TestApp;
let mcp: AppServer;
let rx: WebhookReceiver;
let dispatcher: WebhookDispatcher | null = null;

beforeAll(async () => {
  rx = startWebhookReceiver();
  h = await buildTestApp({
    env: {
      FETCH_ALLOW_HOSTS: rx.host,
      WEBHOOK_RETRY_SCHEDULE_S: "0.2",
      WEBHOOK_TIMEOUT_MS: "3000",
      WEBHOOK_SWEEP_EVERY_MS: "100",
    },
  });
  dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
  mcp = listenApp(h);
});
afterAll(async () => {
  mcp.stop();
  await dispatcher?.stop();
  await h.close();
  rx.stop();
});

/** Reads until `ok` holds (deadline 10 s). */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify(v)}`);
    await Bun.sleep(50);
  }
}

describe("webhook tools", () => {
  test("retry_webhook_delivery sends a failed delivery again (once under one idempotencyKey); get_webhook reads the endpoint; a disabled one is a CONFLICT naming update_webhook", async () => {
    const org = await h.seedOrg({
      scopes: ["webhooks:write", "sites:write", "content:read", "content:write"],
    });
    const client = await mcpClient(mcp, org.key);
    try {
      rx.on("/retry", (_req, n) => new Response(null, { status: n <= 2 ? 503 : 204 }));
      const created = await callTool(client, "create_webhook", {
        url: rx.url("/retry"),
        events: ["site.published"],
      });
      const webhookId = created.structuredContent.webhook.id;
      const read = await callTool(client, "get_webhook", { webhookId });
      expect(read.structuredContent.webhook).toMatchObject({
        id: webhookId,
        url: rx.url("/retry"),
        events: ["site.published"],
        enabled: true,
      });

      const site = (await h.newSite(org.key)) as Json;
      await callTool(client, "publish_site", { siteId: site.id });
      const deliveries = async () =>
        (await callTool(client, "list_webhook_deliveries", { webhookId })).structuredContent
          .deliveries as Json[];
      const [failed] = await until(deliveries, (d) => d[0]?.status === "failed");
      expect(rx.to("/retry")).toHaveLength(2);

      const args = { webhookId, deliveryId: failed.id, idempotencyKey: crypto.randomUUID() };
      const retried = await callTool(client, "retry_webhook_delivery", args);
      expect(retried.structuredContent).toMatchObject({
        accepted: true,
        delivery: { id: failed.id, status: "pending" },
      });
      // Read right after the retry: its try may already be claimed (counted) by then.
      expect(retried.structuredContent.delivery.attempts).toBeGreaterThanOrEqual(2);
      expect(retried.content[0]!.text).toContain("list_webhook_deliveries");
      const hooks = await rx.waitFor("/retry", 3);
      expect(hooks[2]!.id).toBe(failed.id);
      await until(deliveries, (d) => d[0]?.status === "delivered");
      // The same call again answers the first result and sends nothing (a delivered one would go again).
      const replay = await callTool(client, "retry_webhook_delivery", args);
      expect(replay.structuredContent).toEqual(retried.structuredContent);
      await Bun.sleep(500);
      expect(rx.to("/retry")).toHaveLength(3);

      const unknown = await callTool(client, "retry_webhook_delivery", {
        webhookId,
        deliveryId: crypto.randomUUID(),
      });
      expect(unknown.error.code).toBe("NOT_FOUND");
      await callTool(client, "update_webhook", { webhookId, enabled: false });
      const disabled = await callTool(client, "retry_webhook_delivery", { webhookId, deliveryId: failed.id });
      expect(disabled.error.code).toBe("CONFLICT");
      expect(disabled.error.message).toContain("update_webhook");
      expect((await callTool(client, "get_webhook", { webhookId })).structuredContent.webhook.enabled).toBe(
        false,
      );
      const stranger = await mcpClient(mcp, (await h.seedOrg({ scopes: ["webhooks:write"] })).key);
      try {
        expect((await callTool(stranger, "get_webhook", { webhookId })).error.code).toBe("NOT_FOUND");
      } finally {
        await stranger.close();
      }
    } finally {
      await client.close();
    }
  });

  test("retry_webhook_delivery with waitSeconds answers the try's outcome, woken by the dispatcher's work_ended notice; a try slower than the wait answers pending at its end (REST too)", async () => {
    const org = await h.seedOrg({
      scopes: ["webhooks:write", "sites:write", "content:read", "content:write"],
    });
    const client = await mcpClient(mcp, org.key);
    try {
      // The receiver answers the first try at once; later ones after 200 ms (noting how many callers
      // sleep on the shared LISTEN meanwhile), or, on `/wait` once `slow` is set, only when released.
      let waitersDuringTry = -1;
      let slow = false;
      let release: (() => void) | null = null;
      rx.on("/wait", async (_req, n) => {
        if (n === 1) return new Response("ok");
        if (slow) return new Promise<Response>((r) => (release = () => r(new Response("late"))));
        await Bun.sleep(200);
        waitersDuringTry = h.renderWaits.waiting;
        return new Response("ok", { status: 200 });
      });
      const webhookId = (
        await callTool(client, "create_webhook", { url: rx.url("/wait"), events: ["site.published"] })
      ).structuredContent.webhook.id;
      const site = (await h.newSite(org.key)) as Json;
      await callTool(client, "publish_site", { siteId: site.id });
      const deliveries = async () =>
        (await callTool(client, "list_webhook_deliveries", { webhookId })).structuredContent
          .deliveries as Json[];
      const [first] = await until(deliveries, (d) => d[0]?.status === "delivered");

      // Answered at the try's end (the dispatcher's notice), long before the 20 s wait is over.
      const t0 = Date.now();
      const waited = await callTool(client, "retry_webhook_delivery", {
        webhookId,
        deliveryId: first.id,
        waitSeconds: 20,
      });
      expect(waited.structuredContent).toMatchObject({
        accepted: true,
        delivery: { id: first.id, status: "delivered", lastStatusCode: 200, attempts: 2, lastError: null },
      });
      expect(waited.content[0]!.text).toContain("delivered (HTTP 200, try 2)");
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(waitersDuringTry).toBe(1);
      expect(rx.to("/wait")).toHaveLength(2);

      // REST: the same wait on ?waitSeconds=.
      const rest = await h.call(
        "POST",
        `/api/v1/webhooks/${webhookId}/deliveries/${first.id}/retry?waitSeconds=20`,
        { key: org.key },
      );
      expect(rest.status).toBe(202);
      expect(((await rest.json()) as Json).delivery).toMatchObject({ status: "delivered", attempts: 3 });
      const tooLong = await h.call(
        "POST",
        `/api/v1/webhooks/${webhookId}/deliveries/${first.id}/retry?waitSeconds=26`,
        { key: org.key },
      );
      expect(tooLong.status).toBe(400);
      const bad = await callTool(client, "retry_webhook_delivery", {
        webhookId,
        deliveryId: first.id,
        waitSeconds: 26,
      });
      expect(bad.isError).toBe(true);
      expect(bad.error.code).toBe("VALIDATION_ERROR");
      expect(bad.content[0]!.text).toContain("waitSeconds");

      slow = true;
      const pending = await callTool(client, "retry_webhook_delivery", {
        webhookId,
        deliveryId: first.id,
        waitSeconds: 1,
      });
      expect(pending.structuredContent).toMatchObject({
        accepted: true,
        delivery: { id: first.id, status: "pending" },
      });
      expect(pending.content[0]!.text).toContain("had not ended after 1 s");
      await rx.waitFor("/wait", 4);
      (release as (() => void) | null)?.();
      await until(deliveries, (d) => d[0]?.status === "delivered" && d[0]?.attempts === 4);
    } finally {
      await client.close();
    }
  });
});
