import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { purgeOldWebhookRows, startWebhookDispatcher } from "@site/domain/webhooks";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../testing/webhook_receiver.ts";

// Retention (decision 0845): delivered and failed deliveries settled more than WEBHOOK_RETENTION_S ago
// are deleted, then events of that age with no delivery left; pending ones stay whatever their age.
// The rows are made by real actions (a site published, delivered by a dispatcher) and then aged.
let h: TestApp;
let rx: WebhookReceiver;
const DAY = 86_400_000;

beforeAll(async () => {
  rx = startWebhookReceiver();
  h = await buildTestApp({
    env: {
      FETCH_ALLOW_HOSTS: rx.host,
      WEBHOOK_RETRY_SCHEDULE_S: "0", // a second try at once, then failed
      WEBHOOK_RETENTION_S: String(30 * 86_400),
      WEBHOOK_SWEEP_EVERY_MS: "100",
    },
  });
});
afterAll(async () => {
  await h?.close();
  rx?.stop();
});

type Org = Awaited<ReturnType<TestApp["seedOrg"]>>;

async function hookOf(o: Org, path: string) {
  const res = await h.call("POST", "/api/v1/webhooks", {
    key: o.key,
    body: { url: rx.url(path), events: ["site.published"] },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { webhook: { id: string } }).webhook.id;
}

/** Publishes a new site of `o`: one site.published event, one delivery per endpoint. */
async function publishNewSite(o: Org) {
  const site = await h.newSite(o.key);
  expect((await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key })).status).toBe(200);
}

async function deliveries(endpointId: string) {
  return h.sql<{ id: string; event_id: string; status: string }[]>`
    select id, event_id, status from webhook_deliveries where endpoint_id = ${endpointId} order by created_at`;
}

/** Ages a delivery (its settling and its creation) and its event by `days`. */
async function age(deliveryId: string, days: number) {
  await h.sql`update webhook_deliveries set updated_at = updated_at - ${`${days} days`}::interval,
    created_at = created_at - ${`${days} days`}::interval where id = ${deliveryId}`;
  await h.sql`update webhook_events set created_at = created_at - ${`${days} days`}::interval
    where id = (select event_id from webhook_deliveries where id = ${deliveryId})`;
}

const eventExists = async (id: string) =>
  (await h.sql`select 1 from webhook_events where id = ${id}`).length === 1;

describe("old webhook events and deliveries are deleted", () => {
  test("settled deliveries past the retention go, with their events; pending, recent and shared ones stay", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read", "content:write"] });
    const okId = await hookOf(o, "/kept-ok");
    const failId = await hookOf(o, "/kept-fail");
    rx.on("/kept-fail", () => new Response("no", { status: 500 }));
    // Three events, each to both endpoints: delivered on one, failed on the other.
    for (let i = 0; i < 3; i++) await publishNewSite(o);
    const dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
    try {
      for (let i = 0; i < 200; i++) {
        const all = [...(await deliveries(okId)), ...(await deliveries(failId))];
        if (all.length === 6 && all.every((d) => d.status !== "pending")) break;
        await Bun.sleep(50);
      }
    } finally {
      await dispatcher.stop();
    }
    const [ok1, ok2, ok3] = await deliveries(okId);
    const [fail1, fail2, fail3] = await deliveries(failId);
    expect([ok1, ok2, ok3].map((d) => d!.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect([fail1, fail2, fail3].map((d) => d!.status)).toEqual(["failed", "failed", "failed"]);
    // Event 1: both deliveries 31 days old. Event 2: one old, one recent. Event 3: recent.
    await age(ok1!.id, 31);
    await h.sql`update webhook_deliveries set updated_at = now() - interval '31 days' where id = ${fail1!.id}`;
    await age(ok2!.id, 31);
    // A pending delivery stays however old (no dispatcher runs now), and so does its event.
    const other = await h.seedOrg({ scopes: ["webhooks:write", "sites:write"] });
    const pendingHook = await hookOf(other, "/pending");
    await publishNewSite(other);
    const [stillPending] = await deliveries(pendingHook);
    expect(stillPending!.status).toBe("pending");
    await age(stillPending!.id, 40);

    const report = await purgeOldWebhookRows(h.ctx);
    expect(report.deliveries).toBeGreaterThanOrEqual(3);
    expect((await deliveries(okId)).map((d) => d.id)).toEqual([ok3!.id]);
    expect((await deliveries(failId)).map((d) => d.id)).toEqual([fail2!.id, fail3!.id]);
    expect(await eventExists(ok1!.event_id)).toBe(false); // old, and no delivery left
    expect(await eventExists(ok2!.event_id)).toBe(true); // a recent delivery still points at it
    expect(await eventExists(ok3!.event_id)).toBe(true);
    expect((await deliveries(pendingHook)).map((d) => d.status)).toEqual(["pending"]);
    expect(await eventExists(stillPending!.event_id)).toBe(true);
    // The log shows what is left.
    const log = await h.call("GET", `/api/v1/webhooks/${okId}/deliveries`, { key: o.key });
    expect(((await log.json()) as { deliveries: { id: string }[] }).deliveries.map((d) => d.id)).toEqual([
      ok3!.id,
    ]);
    // Nothing more to do: a second sweep deletes nothing.
    expect(await purgeOldWebhookRows(h.ctx)).toEqual({ deliveries: 0, events: 0 });
  });

  test("an old event whose endpoint was deleted goes; a dispatcher sweeps at its start", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read", "content:write"] });
    const hookId = await hookOf(o, "/deleted");
    await publishNewSite(o);
    const [d] = await deliveries(hookId);
    await age(d!.id, 31);
    expect((await h.call("DELETE", `/api/v1/webhooks/${hookId}`, { key: o.key })).status).toBe(204);
    expect(await eventExists(d!.event_id)).toBe(true); // the delivery went with its endpoint, not the event
    const dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
    try {
      for (let i = 0; i < 100 && (await eventExists(d!.event_id)); i++) await Bun.sleep(50);
    } finally {
      await dispatcher.stop();
    }
    expect(await eventExists(d!.event_id)).toBe(false);
  });

  test("the sweep deletes in batches: 2,500 old delivered rows in one call", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read", "content:write"] });
    const hookId = await hookOf(o, "/bulk");
    await h.sql`
      with ev as (
        insert into webhook_events (org_id, type, data, created_at)
        select ${o.org.id}::uuid, 'site.published', '{}'::jsonb, now() - interval '60 days'
        from generate_series(1, 2500)
        returning id
      )
      insert into webhook_deliveries (org_id, endpoint_id, event_id, status, attempts, created_at, updated_at)
      select ${o.org.id}::uuid, ${hookId}::uuid, ev.id, 'delivered', 1, now() - interval '60 days',
        now() - interval '60 days'
      from ev`;
    const report = await purgeOldWebhookRows(h.ctx, { now: new Date(Date.now() + DAY) });
    expect(report.deliveries).toBeGreaterThanOrEqual(2500);
    expect(report.events).toBeGreaterThanOrEqual(2500);
    expect(await deliveries(hookId)).toHaveLength(0);
  });
});
