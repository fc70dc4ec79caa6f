import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../testing/mod.ts";
import { startWebhookReceiver, verifyHook, type WebhookReceiver } from "../testing/webhook_receiver.ts";

// At least once across a crash (decisions 0840, 0841): `bun run apps/api` commits a change, starts its
// delivery, and is SIGKILLed while the receiver holds its answer; a new process on the same database
// sends the event again with the same webhook-id. This process only seeds and reads: it runs no
// dispatcher of its own.
let h: TestApp;
let rx: WebhookReceiver;
const procs: ApiProcess[] = [];

beforeAll(async () => {
  rx = startWebhookReceiver();
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: rx.host } });
});
afterAll(async () => {
  for (const p of procs) await p.kill().catch(() => {});
  await h?.close();
  rx?.stop();
});

const apiEnv = () => ({
  DATABASE_URL: h.databaseUrl,
  FETCH_ALLOW_HOSTS: rx.host,
  // A try's lease runs out WEBHOOK_TIMEOUT_MS + 5 s after it began: 6 s after the kill at most.
  WEBHOOK_TIMEOUT_MS: "1000",
  WEBHOOK_SWEEP_EVERY_MS: "200",
  // One try in flight per endpoint: a second event waits, committed but not yet tried, behind the first.
  WEBHOOK_ENDPOINT_CONCURRENCY: "1",
  LOG_LEVEL: "error",
});

async function start(): Promise<ApiProcess> {
  const p = await spawnApi(apiEnv());
  procs.push(p);
  return p;
}

const deliveryRows = (endpointId: string) =>
  h.sql<{ id: string; status: string; attempts: number; lease_until: Date | null }[]>`
    select id, status, attempts, lease_until from webhook_deliveries where endpoint_id = ${endpointId}`;

describe("a kill of the API between the change and the delivery", () => {
  test("SIGKILL with one try in flight and one event not yet tried: a new process sends both, same webhook-ids", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read", "content:write"] });
    const created = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: rx.url("/kill"), events: ["site.published"] },
    });
    expect(created.status).toBe(201);
    const { webhook, secret } = (await created.json()) as { webhook: { id: string }; secret: string };
    // The first try's answer never comes (the delivery stays in flight); any later try gets 200.
    rx.on("/kill", (_req, tryOfId) => (tryOfId === 1 ? rx.hang() : new Response("ok")));
    const siteA = await h.newSite(o.key);
    const siteB = await h.newSite(o.key);

    const first = await start();
    const publish = (siteId: string) =>
      fetch(`${first.url}/api/v1/sites/${siteId}/publish`, {
        method: "POST",
        headers: { authorization: `Bearer ${o.key}` },
      });
    expect((await publish(siteA.id)).status).toBe(200); // the change committed, in the first process
    const [held] = await rx.waitFor("/kill", 1, 15_000);
    expect((await publish(siteB.id)).status).toBe(200);
    const before = await deliveryRows(webhook.id);
    expect(before).toHaveLength(2);
    expect(before.find((r) => r.id === held!.id)).toMatchObject({ status: "pending", attempts: 1 });
    const waiting = before.find((r) => r.id !== held!.id)!;
    expect(waiting).toMatchObject({ status: "pending", attempts: 0 });
    await first.kill();
    expect(rx.to("/kill")).toHaveLength(1);

    const second = await start();
    const hooks = await rx.waitFor("/kill", 3, 30_000);
    const after = hooks.slice(1);
    const sites = new Map([
      [held!.id, siteA.id],
      [waiting.id, siteB.id],
    ]);
    for (const hook of after) {
      expect(sites.has(hook.id)).toBe(true);
      const payload = verifyHook(secret, hook) as { type: string; data: { id: string } };
      expect(payload.type).toBe("site.published");
      expect(payload.data.id).toBe(sites.get(hook.id)!);
    }
    // Each event arrived after the restart, once or more, never zero times.
    expect(new Set(after.map((x) => x.id))).toEqual(new Set([held!.id, waiting.id]));
    let rows = await deliveryRows(webhook.id);
    for (let i = 0; i < 100 && rows.some((r) => r.status !== "delivered"); i++) {
      await Bun.sleep(100);
      rows = await deliveryRows(webhook.id);
    }
    expect(rows).toHaveLength(2); // two events, two deliveries: nothing invented by the restart
    expect(rows.every((r) => r.status === "delivered")).toBe(true);
    expect(rows.find((r) => r.id === held!.id)!.attempts).toBeGreaterThanOrEqual(2);
    await second.kill();
  }, 90_000);
});
