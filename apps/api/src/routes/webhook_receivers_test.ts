import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fixedClock } from "@site/config";
import type { Context } from "@site/domain/core";
import { claimDueDeliveries, deliverWebhook, type TryResult } from "@site/domain/webhooks";
import { sql } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { startWebhookReceiver, verifyHook, type WebhookReceiver } from "../../testing/webhook_receiver.ts";

// Issue 38, "Webhooks as receivers expect" (CONTRACT "Webhooks, second pass"; Standard Webhooks and
// Svix's behaviour): a real receiver on loopback answers 410, 503/429 with Retry-After, 302, and 200
// after 12 s. No dispatcher runs here: each test claims and tries what is due itself, with the real
// claim and try, on a clock it moves, so retry schedules are checked without sleeping.
let rx: WebhookReceiver;
let h: TestApp;
const clock = fixedClock(new Date());
let ctx: Context;

const ALL = ["webhooks:write", "sites:write", "content:read", "content:write", "social:write"] as const;

beforeAll(async () => {
  rx = startWebhookReceiver();
  // WEBHOOK_TIMEOUT_MS is left at its default on purpose (the 12 s test proves it).
  h = await buildTestApp({
    env: { FETCH_ALLOW_HOSTS: rx.host, WEBHOOK_RETRY_SCHEDULE_S: "1,60,3600" },
  });
  ctx = { ...h.ctx, clock };
});
afterAll(async () => {
  await h?.close();
  rx?.stop();
});

type Org = Awaited<ReturnType<TestApp["seedOrg"]>>;
const org = () => h.seedOrg({ scopes: [...ALL] });

async function addHook(o: Org, path: string, events: string[] = ["site.published"]) {
  const res = await h.call("POST", "/api/v1/webhooks", { key: o.key, body: { url: rx.url(path), events } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { webhook: { id: string; url: string; events: string[] }; secret: string };
}

async function publishNewSite(o: Org) {
  const site = await h.newSite(o.key);
  expect((await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key })).status).toBe(200);
  return site;
}

/** Puts the test clock at real time plus `ms` (after what was just recorded, so that it is due). */
function clockAt(ms = 0): Date {
  clock.set(new Date(Date.now() + 1000 + ms));
  return clock.now();
}

/** Claims every delivery due on the test clock and tries each once (what a dispatcher pass does). */
async function runDue(): Promise<TryResult[]> {
  const claimed = await claimDueDeliveries(ctx, 100);
  return Promise.all(
    claimed.map((c) => deliverWebhook(ctx, { deliveryId: c.id, leaseToken: c.lease_token })),
  );
}

type Delivery = {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
};

async function deliveriesOf(o: Org, hookId: string): Promise<Delivery[]> {
  const res = await h.call("GET", `/api/v1/webhooks/${hookId}/deliveries`, { key: o.key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

async function endpoint(o: Org, hookId: string) {
  const res = await h.call("GET", `/api/v1/webhooks/${hookId}`, { key: o.key });
  expect(res.status).toBe(200);
  return (await res.json()).webhook as {
    enabled: boolean;
    disabledReason: string | null;
    disabledAt: string | null;
  };
}

describe("what the receiver answers", () => {
  test("410 Gone disables the endpoint at once, is never retried, and the organization's other endpoints subscribed to webhook.endpoint.disabled are told", async () => {
    const o = await org();
    const gone = await addHook(o, "/gone");
    const watcher = await addHook(o, "/watch", ["webhook.endpoint.disabled"]);
    await addHook(o, "/bystander", ["site.published"]);
    const other = await org();
    await addHook(other, "/other-org", ["webhook.endpoint.disabled"]);
    rx.on("/gone", () => new Response("unsubscribed", { status: 410 }));

    await publishNewSite(o);
    const at = clockAt();
    await runDue();
    expect(rx.to("/gone")).toHaveLength(1);
    expect(rx.to("/bystander")).toHaveLength(1);

    const shown = await endpoint(o, gone.webhook.id);
    expect(shown.enabled).toBe(false);
    expect(shown.disabledReason).toContain("410");
    expect(shown.disabledAt).toBe(at.toISOString());
    const [d] = await deliveriesOf(o, gone.webhook.id);
    expect(d).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 410, nextAttemptAt: null });

    // Never tried again, however long we wait; new events are not even recorded for it.
    clockAt(7 * 86_400_000);
    await publishNewSite(o);
    await runDue();
    expect(rx.to("/gone")).toHaveLength(1);

    // The watcher got the event, signed, with the endpoint as its GET answers it; nobody else did.
    const [told] = rx.to("/watch");
    expect(told).toBeDefined();
    const payload = verifyHook(watcher.secret, told!) as { type: string; data: unknown };
    expect(payload.type).toBe("webhook.endpoint.disabled");
    expect(payload.data).toEqual(
      (await (await h.call("GET", `/api/v1/webhooks/${gone.webhook.id}`, { key: o.key })).json()).webhook,
    );
    expect(rx.to("/watch")).toHaveLength(1);
    expect(rx.to("/bystander").every((x) => x.json.type === "site.published")).toBe(true);
    expect(rx.to("/other-org")).toHaveLength(0);

    // Enabling clears when and why.
    const on = await h.call("PATCH", `/api/v1/webhooks/${gone.webhook.id}`, {
      key: o.key,
      body: { enabled: true },
    });
    expect((await on.json()).webhook).toMatchObject({
      enabled: true,
      disabledReason: null,
      disabledAt: null,
    });
  });

  test("an endpoint disabled with PATCH, or after failing for days, tells the others too (once)", async () => {
    const o = await org();
    const watcher = await addHook(o, "/watch-2", ["webhook.endpoint.disabled"]);
    const manual = await addHook(o, "/manual-off");
    const dead = await addHook(o, "/dead-2");
    rx.on("/dead-2", () => new Response("down", { status: 502 }));

    clockAt();
    for (let i = 0; i < 2; i++) {
      const off = await h.call("PATCH", `/api/v1/webhooks/${manual.webhook.id}`, {
        key: o.key,
        body: { enabled: false },
      });
      expect(off.status).toBe(200);
    }
    const manualShown = await endpoint(o, manual.webhook.id);
    expect(manualShown.disabledReason).toMatch(/PATCH/);
    expect(manualShown.disabledAt).not.toBeNull();

    await h.db.execute(
      sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = ${dead.webhook.id}::uuid`,
    );
    await publishNewSite(o);
    clockAt();
    await runDue(); // the 502 that disables /dead-2
    await runDue(); // the events it recorded
    expect((await endpoint(o, dead.webhook.id)).enabled).toBe(false);

    const told = rx.to("/watch-2").map((x) => verifyHook(watcher.secret, x) as { data: { id: string } });
    expect(told.map((x) => x.data.id).sort()).toEqual([manual.webhook.id, dead.webhook.id].sort());
  });

  test("503 and 429 with Retry-After put the next try at least that far off, within the schedule's longest step", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/busy");
    let t2 = new Date(0);
    rx.on("/busy", (_req, n) => {
      if (n === 1) return new Response("later", { status: 503, headers: { "retry-after": "120" } });
      // An HTTP-date two hours off: more than the longest step (3600 s), so the step caps it.
      if (n === 2)
        return new Response("slow down", {
          status: 429,
          headers: { "retry-after": new Date(t2.getTime() + 7_200_000).toUTCString() },
        });
      return new Response("ok");
    });
    await publishNewSite(o);
    const t1 = clockAt();
    await runDue();
    let [d] = await deliveriesOf(o, webhook.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: 503 });
    // The schedule says about 1 s; the receiver said 120 s.
    expect(d!.nextAttemptAt).toBe(new Date(t1.getTime() + 120_000).toISOString());
    clock.set(new Date(t1.getTime() + 119_000));
    await runDue();
    expect(rx.to("/busy")).toHaveLength(1);

    t2 = new Date(t1.getTime() + 120_000);
    clock.set(t2);
    await runDue();
    expect(rx.to("/busy")).toHaveLength(2);
    [d] = await deliveriesOf(o, webhook.id);
    expect(d).toMatchObject({ status: "pending", attempts: 2, lastStatusCode: 429 });
    expect(d!.nextAttemptAt).toBe(new Date(t2.getTime() + 3_600_000).toISOString());

    clock.set(new Date(t2.getTime() + 3_600_000));
    await runDue();
    [d] = await deliveriesOf(o, webhook.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 3, lastStatusCode: 200 });
    expect(new Set(rx.to("/busy").map((x) => x.id)).size).toBe(1);
  });

  test("a 302 is not followed: the try fails with lastStatusCode 302 and is retried on the schedule", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/moved");
    rx.on("/moved", () => new Response(null, { status: 302, headers: { location: rx.url("/moved-to") } }));
    await publishNewSite(o);
    const at = clockAt();
    await runDue();
    const [d] = await deliveriesOf(o, webhook.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: 302 });
    expect(d!.lastError).toContain("redirect");
    const wait = new Date(d!.nextAttemptAt!).getTime() - at.getTime();
    expect(wait).toBeGreaterThanOrEqual(900);
    expect(wait).toBeLessThanOrEqual(1100);
    expect(rx.to("/moved-to")).toHaveLength(0);
  });

  test("the default timeout is 15 s: a receiver answering after 12 s is delivered on the first try", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/slow");
    rx.on("/slow", async () => {
      await Bun.sleep(12_000);
      return new Response("ok");
    });
    await publishNewSite(o);
    clockAt();
    await runDue();
    const [d] = await deliveriesOf(o, webhook.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 200, lastError: null });
    expect(h.ctx.config.webhooks.timeoutMs).toBe(15_000);
  }, 40_000);
});

describe("POST /api/v1/webhooks/<id>/recover", () => {
  test("needs webhooks:write", async () => {
    const id = crypto.randomUUID();
    await expectAuthRules(h, {
      method: "POST",
      path: `/api/v1/webhooks/${id}/recover`,
      scope: "webhooks:write",
      body: { since: new Date().toISOString() },
    });
  });

  test("every failed delivery since `since` is tried again, with the same webhook-ids; older and delivered ones are not", async () => {
    const o = await org();
    const { webhook, secret } = await addHook(o, "/outage");
    let down = true;
    rx.on("/outage", () => new Response(down ? "down" : "ok", { status: down ? 500 : 200 }));
    for (let i = 0; i < 3; i++) await publishNewSite(o);
    // Through the whole schedule (1 s, 60 s, 3600 s): four tries each, all failed.
    let at = clockAt();
    for (let round = 0; round < 4; round++) {
      await runDue();
      at = new Date(at.getTime() + 2 * 3_600_000);
      clock.set(at);
    }
    const failed = await deliveriesOf(o, webhook.id);
    expect(failed.map((d) => [d.status, d.attempts])).toEqual([
      ["failed", 4],
      ["failed", 4],
      ["failed", 4],
    ]);
    // One of them failed long before the outage window asked for.
    const old = failed[2]!.id;
    await h.db.execute(
      sql`update webhook_deliveries set created_at = now() - interval '3 days' where id = ${old}::uuid`,
    );
    // One delivered since then is not sent again.
    down = false;
    await publishNewSite(o);
    clockAt();
    await runDue();
    const before = rx.to("/outage").length;

    const res = await h.call("POST", `/api/v1/webhooks/${webhook.id}/recover`, {
      key: o.key,
      body: { since: new Date(Date.now() - 86_400_000).toISOString() },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, deliveries: 2 });
    clockAt();
    await runDue();
    const resent = rx.to("/outage").slice(before);
    expect(resent.map((x) => x.id).sort()).toEqual([failed[0]!.id, failed[1]!.id].sort());
    for (const x of resent) verifyHook(secret, x);
    const after = await deliveriesOf(o, webhook.id);
    expect(after.find((d) => d.id === failed[0]!.id)).toMatchObject({ status: "delivered", attempts: 5 });
    expect(after.find((d) => d.id === old)).toMatchObject({ status: "failed", attempts: 4 });
  });

  test("since: ISO 8601, at most 14 days back (400 VALIDATION_ERROR); 404 for another organization's; 409 while disabled", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/recover-rules");
    const path = `/api/v1/webhooks/${webhook.id}/recover`;
    for (const body of [
      { since: new Date(Date.now() - 15 * 86_400_000).toISOString() },
      { since: "yesterday" },
      { since: new Date(Date.now() + 3_600_000).toISOString() },
      {},
      { since: 1700000000 },
    ]) {
      const res = await h.call("POST", path, { key: o.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error.code).toBe("VALIDATION_ERROR");
    }
    const ok = await h.call("POST", path, {
      key: o.key,
      body: { since: new Date(Date.now() - 13.9 * 86_400_000).toISOString() },
    });
    expect(ok.status).toBe(202);
    expect(await ok.json()).toEqual({ accepted: true, deliveries: 0 });
    const stranger = await org();
    const theirs = await h.call("POST", path, {
      key: stranger.key,
      body: { since: new Date().toISOString() },
    });
    expect(theirs.status).toBe(404);
    await h.call("PATCH", `/api/v1/webhooks/${webhook.id}`, { key: o.key, body: { enabled: false } });
    const disabled = await h.call("POST", path, { key: o.key, body: { since: new Date().toISOString() } });
    expect(disabled.status).toBe(409);
  });
});

describe("OpenAPI", () => {
  test("documents POST /webhooks/{webhookId}/recover beside its siblings, and the new event and fields", async () => {
    const doc = (await (await h.call("GET", "/swagger/json")).json()) as {
      paths: Record<
        string,
        Record<string, { tags?: string[]; requestBody?: unknown; responses: Record<string, unknown> }>
      >;
    };
    const recover = doc.paths["/api/v1/webhooks/{webhookId}/recover"]?.post;
    expect(recover).toBeDefined();
    expect(recover!.tags).toEqual(["webhooks"]);
    expect(Object.keys(recover!.responses)).toEqual(
      expect.arrayContaining(["202", "400", "401", "403", "404", "409"]),
    );
    expect(JSON.stringify(recover!.requestBody)).toContain("since");
    const text = JSON.stringify(doc);
    expect(text).toContain("webhook.endpoint.disabled");
    expect(text).toContain("disabledAt");
  });
});
