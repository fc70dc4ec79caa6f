import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startWebhookDispatcher, type WebhookDispatcher } from "@site/domain/webhooks";
import { sql } from "drizzle-orm";
import { buildTestApp, expectAuthRules, type TestApp } from "../../testing/mod.ts";
import { startWebhookReceiver, verifyHook, type WebhookReceiver } from "../../testing/webhook_receiver.ts";
import { createApiMetrics } from "../api_metrics.ts";

// One receiver on loopback (allowed through FETCH_ALLOW_HOSTS), a short retry schedule, a 1 s timeout.
let rx: WebhookReceiver;
let closedPort: number;
let h: TestApp;
let dispatcher: WebhookDispatcher | null = null;

const ALL = ["webhooks:write", "sites:write", "content:read", "content:write", "social:write"] as const;

beforeAll(async () => {
  rx = startWebhookReceiver();
  // A port nothing listens on (for now): the refused-connection case.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  closedPort = probe.port as number;
  probe.stop(true);
  h = await buildTestApp({
    env: {
      FETCH_ALLOW_HOSTS: `${rx.host},127.0.0.1:${closedPort}`,
      WEBHOOK_RETRY_SCHEDULE_S: "0.3,0.3,0.3",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_SWEEP_EVERY_MS: "100",
    },
  });
  dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
});
afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
  rx?.stop();
});

type Org = Awaited<ReturnType<TestApp["seedOrg"]>>;
const org = () => h.seedOrg({ scopes: [...ALL] });

async function addHook(o: Org, path: string, events: string[] = ["site.published"]) {
  const res = await h.call("POST", "/api/v1/webhooks", { key: o.key, body: { url: rx.url(path), events } });
  expect(res.status).toBe(201);
  return (await res.json()) as { webhook: { id: string; url: string; events: string[] }; secret: string };
}

/** Publishes a new site of `o` through the API: the real action behind site.published. */
async function publishNewSite(o: Org) {
  const site = await h.newSite(o.key);
  const res = await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key });
  expect(res.status).toBe(200);
  return site;
}

async function deliveriesOf(o: Org, hookId: string) {
  const res = await h.call("GET", `/api/v1/webhooks/${hookId}/deliveries`, { key: o.key });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    deliveries: {
      id: string;
      event: string;
      status: string;
      attempts: number;
      lastStatusCode: number | null;
      lastError: string | null;
      nextAttemptAt: string | null;
    }[];
    nextCursor: string | null;
  };
}

async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await Bun.sleep(30);
  }
}

describe("webhook endpoints", () => {
  test("every route needs a key with webhooks:write", async () => {
    const id = crypto.randomUUID();
    for (const [method, path, body] of [
      ["POST", "/api/v1/webhooks", { url: rx.url("/a"), events: ["site.published"] }],
      ["GET", "/api/v1/webhooks"],
      ["GET", `/api/v1/webhooks/${id}`],
      ["PATCH", `/api/v1/webhooks/${id}`, { enabled: true }],
      ["DELETE", `/api/v1/webhooks/${id}`],
      ["POST", `/api/v1/webhooks/${id}/rotate-secret`],
      ["GET", `/api/v1/webhooks/${id}/deliveries`],
      ["POST", `/api/v1/webhooks/${id}/deliveries/${id}/retry`],
    ] as [string, string, unknown?][])
      await expectAuthRules(h, { method, path, scope: "webhooks:write", body });
  });

  test("the secret is whsec_<base64>, shown at creation only; list, get, patch and delete", async () => {
    const o = await org();
    const created = await addHook(o, "/crud", ["site.published", "media.created"]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(created.secret.slice(6), "base64").length).toBe(32);
    expect(created.webhook).toMatchObject({ url: rx.url("/crud"), enabled: true, description: null });
    const list = await (await h.call("GET", "/api/v1/webhooks", { key: o.key })).json();
    expect(JSON.stringify(list)).not.toContain(created.secret.slice(6));
    expect(list.webhooks.map((w: { id: string }) => w.id)).toEqual([created.webhook.id]);
    const patched = await h.call("PATCH", `/api/v1/webhooks/${created.webhook.id}`, {
      key: o.key,
      body: { events: ["media.created"], description: "files" },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).webhook).toMatchObject({ events: ["media.created"], description: "files" });
    expect((await h.call("DELETE", `/api/v1/webhooks/${created.webhook.id}`, { key: o.key })).status).toBe(
      204,
    );
    expect((await h.call("GET", `/api/v1/webhooks/${created.webhook.id}`, { key: o.key })).status).toBe(404);
  });

  test("guarded URLs are refused at create and at patch (400), unknown events too", async () => {
    const o = await org();
    for (const url of [
      "http://example.com/hook", // plain http to a public host
      "https://10.0.0.7/hook",
      "https://127.0.0.1:1/hook", // loopback, not in FETCH_ALLOW_HOSTS
      "https://localhost/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::ffff:127.0.0.1]/hook",
      "https://0x7f000001/hook",
      "https://user:pw@example.com/hook",
      "ftp://example.com/hook",
      "not a url",
    ]) {
      const res = await h.call("POST", "/api/v1/webhooks", {
        key: o.key,
        body: { url, events: ["site.published"] },
      });
      expect(res.status, url).toBe(400);
      expect((await res.json()).error.code).toBe("VALIDATION_ERROR");
    }
    const bad = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: rx.url("/x"), events: ["site.exploded"] },
    });
    expect(bad.status).toBe(400);
    const { webhook } = await addHook(o, "/guard");
    const patch = await h.call("PATCH", `/api/v1/webhooks/${webhook.id}`, {
      key: o.key,
      body: { url: "https://192.168.1.1/hook" },
    });
    expect(patch.status).toBe(400);
    expect((await h.call("GET", "/api/v1/webhooks", { key: o.key })).status).toBe(200);
    const none = await h.call("GET", "/api/v1/webhooks", { key: o.key });
    expect((await none.json()).webhooks).toHaveLength(1);
  });
});

describe("delivery", () => {
  test("site.published arrives signed (standardwebhooks verifies it) with the site as its GET answers it, once per publish", async () => {
    const o = await org();
    const { webhook, secret } = await addHook(o, "/published");
    const site = await publishNewSite(o);
    const [hook] = await rx.waitFor("/published");
    const payload = verifyHook(secret, hook!) as { type: string; timestamp: string; data: unknown };
    expect(payload.type).toBe("site.published");
    expect(new Date(payload.timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const got = await (await h.call("GET", `/api/v1/sites/${site.id}`, { key: o.key })).json();
    expect(payload.data).toEqual(got.site);
    expect(hook!.headers["content-type"]).toBe("application/json");
    // Publishing again changes nothing: no second event.
    await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key });
    const log = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "delivered" && l;
    });
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]).toMatchObject({
      id: hook!.id,
      event: "site.published",
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
  });

  test("500s are retried with the same webhook-id until the receiver takes it", async () => {
    const o = await org();
    const { webhook, secret } = await addHook(o, "/flaky");
    rx.on("/flaky", (_req, n) => new Response("boom", { status: n < 3 ? 500 : 200 }));
    await publishNewSite(o);
    const hooks = await rx.waitFor("/flaky", 3);
    expect(new Set(hooks.map((x) => x.id)).size).toBe(1);
    for (const x of hooks) verifyHook(secret, x);
    const log = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "delivered" && l;
    });
    expect(log.deliveries[0]).toMatchObject({ attempts: 3, lastStatusCode: 200 });
  });

  test("a refused connection is retried, and the same webhook-id arrives once the receiver listens", async () => {
    const o = await org();
    const res = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: `http://127.0.0.1:${closedPort}/late`, events: ["site.published"] },
    });
    expect(res.status).toBe(201);
    const { webhook } = await res.json();
    await publishNewSite(o);
    const failed = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.lastError ? l.deliveries[0] : null;
    });
    expect(failed.status).toBe("pending");
    expect(failed.lastStatusCode).toBeNull();
    expect(failed.lastError).toMatch(/refused|connect/i);
    const late = startWebhookReceiver({ port: closedPort });
    try {
      const [hook] = await late.waitFor("/late");
      expect(hook!.id).toBe(failed.id);
    } finally {
      late.stop();
    }
  });

  test("a hanging receiver times out (WEBHOOK_TIMEOUT_MS) and the retry carries the same webhook-id", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/hang");
    rx.on("/hang", (_req, n) => (n === 1 ? rx.hang() : new Response("ok")));
    await publishNewSite(o);
    const hooks = await rx.waitFor("/hang", 2);
    expect(hooks[1]!.id).toBe(hooks[0]!.id);
    const log = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "delivered" && l;
    });
    expect(log.deliveries[0]!.attempts).toBe(2);
  });

  test("a redirect is not followed: the try fails and the redirect's target sees nothing", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/redirect");
    rx.on("/redirect", () => new Response(null, { status: 307, headers: { location: rx.url("/target") } }));
    await publishNewSite(o);
    const d = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "failed" && l.deliveries[0];
    });
    expect(d.attempts).toBe(4); // one try and the three retries of the schedule
    expect(d.lastError).toContain("redirect");
    expect(d.lastStatusCode).toBe(307); // the receiver's status, a 3xx included (issue 38)
    expect(rx.to("/redirect")).toHaveLength(4);
    expect(rx.to("/target")).toHaveLength(0);
  });

  test("a failed delivery is sent again by a manual retry (202), with the same webhook-id", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/manual");
    rx.on("/manual", (_req, n) => new Response(null, { status: n <= 4 ? 503 : 204 }));
    await publishNewSite(o);
    const d = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "failed" && l.deliveries[0];
    });
    expect(d.lastStatusCode).toBe(503);
    const retry = await h.call("POST", `/api/v1/webhooks/${webhook.id}/deliveries/${d.id}/retry`, {
      key: o.key,
    });
    expect(retry.status).toBe(202);
    const hooks = await rx.waitFor("/manual", 5);
    expect(hooks[4]!.id).toBe(d.id);
    const after = await until(async () => {
      const l = await deliveriesOf(o, webhook.id);
      return l.deliveries[0]?.status === "delivered" && l.deliveries[0];
    });
    expect(after.lastStatusCode).toBe(204);
    const unknown = await h.call(
      "POST",
      `/api/v1/webhooks/${webhook.id}/deliveries/${crypto.randomUUID()}/retry`,
      {
        key: o.key,
      },
    );
    expect(unknown.status).toBe(404);
  });

  test("after a rotation both secrets verify during the overlap; after it only the new one", async () => {
    const o = await org();
    const { webhook, secret: old } = await addHook(o, "/rotate");
    const rot = await h.call("POST", `/api/v1/webhooks/${webhook.id}/rotate-secret`, { key: o.key });
    expect(rot.status).toBe(200);
    const { secret: fresh, previousSecretExpiresAt } = await rot.json();
    expect(fresh).not.toBe(old);
    expect(new Date(previousSecretExpiresAt).getTime() - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    await publishNewSite(o);
    const [during] = await rx.waitFor("/rotate");
    expect(during!.signature.split(" ")).toHaveLength(2);
    verifyHook(old, during!);
    verifyHook(fresh, during!);
    // The overlap ends.
    await h.db.execute(
      sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${webhook.id}::uuid`,
    );
    await publishNewSite(o);
    const [, after] = await rx.waitFor("/rotate", 2);
    verifyHook(fresh, after!);
    expect(() => verifyHook(old, after!)).toThrow();
  });

  test("organizations are isolated: events go to their own endpoints, other endpoints answer 404", async () => {
    const a = await org();
    const b = await org();
    const ha = await addHook(a, "/iso-a");
    const hb = await addHook(b, "/iso-b");
    await publishNewSite(a);
    await rx.waitFor("/iso-a");
    await Bun.sleep(300);
    expect(rx.to("/iso-b")).toHaveLength(0);
    for (const [method, path] of [
      ["GET", `/api/v1/webhooks/${ha.webhook.id}`],
      ["PATCH", `/api/v1/webhooks/${ha.webhook.id}`],
      ["DELETE", `/api/v1/webhooks/${ha.webhook.id}`],
      ["POST", `/api/v1/webhooks/${ha.webhook.id}/rotate-secret`],
      ["GET", `/api/v1/webhooks/${ha.webhook.id}/deliveries`],
    ] as const) {
      const res = await h.call(method, path, {
        key: b.key,
        body: method === "PATCH" ? { enabled: false } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const log = await deliveriesOf(a, ha.webhook.id);
    const retry = await h.call(
      "POST",
      `/api/v1/webhooks/${hb.webhook.id}/deliveries/${log.deliveries[0]!.id}/retry`,
      {
        key: b.key,
      },
    );
    expect(retry.status).toBe(404);
    expect(
      (
        (await h.call("GET", "/api/v1/webhooks", { key: b.key })).json() as Promise<{ webhooks: unknown[] }>
      ).then((x) => x.webhooks.length),
    ).resolves.toBe(1);
  });

  test("an event committed while no dispatcher runs is delivered once one starts (outbox)", async () => {
    await dispatcher?.stop();
    dispatcher = null;
    const o = await org();
    const { webhook, secret } = await addHook(o, "/outbox");
    await publishNewSite(o);
    await Bun.sleep(500);
    expect(rx.to("/outbox")).toHaveLength(0);
    const log = await deliveriesOf(o, webhook.id);
    expect(log.deliveries[0]).toMatchObject({ status: "pending", attempts: 0 });
    dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
    const [hook] = await rx.waitFor("/outbox");
    verifyHook(secret, hook!);
    expect(hook!.id).toBe(log.deliveries[0]!.id);
  });

  test("an endpoint failing for 5 days is disabled and says why; its deliveries fail; enabling clears it", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/dead");
    rx.on("/dead", () => new Response("down", { status: 502 }));
    await h.db.execute(
      sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = ${webhook.id}::uuid`,
    );
    await publishNewSite(o);
    const shown = await until(async () => {
      const w = (await (await h.call("GET", `/api/v1/webhooks/${webhook.id}`, { key: o.key })).json())
        .webhook;
      return !w.enabled && w;
    });
    expect(shown.disabledReason).toMatch(
      /disabled: every try has failed since .* \(5 days or more\).*HTTP 502/,
    );
    const log = await deliveriesOf(o, webhook.id);
    expect(log.deliveries[0]).toMatchObject({ status: "failed", attempts: 1 });
    // While disabled: no new deliveries, and a retry is refused.
    const retry = await h.call(
      "POST",
      `/api/v1/webhooks/${webhook.id}/deliveries/${log.deliveries[0]!.id}/retry`,
      {
        key: o.key,
      },
    );
    expect(retry.status).toBe(409);
    const enabled = await h.call("PATCH", `/api/v1/webhooks/${webhook.id}`, {
      key: o.key,
      body: { enabled: true },
    });
    expect((await enabled.json()).webhook).toMatchObject({ enabled: true, disabledReason: null });
  });

  test("the delivery log pages with a cursor, newest first", async () => {
    const o = await org();
    const { webhook } = await addHook(o, "/paged");
    for (let i = 0; i < 3; i++) await publishNewSite(o);
    await rx.waitFor("/paged", 3);
    const p1 = await (
      await h.call("GET", `/api/v1/webhooks/${webhook.id}/deliveries?limit=2`, { key: o.key })
    ).json();
    expect(p1.deliveries).toHaveLength(2);
    expect(p1.nextCursor).toBeString();
    const p2 = await (
      await h.call("GET", `/api/v1/webhooks/${webhook.id}/deliveries?limit=2&cursor=${p1.nextCursor}`, {
        key: o.key,
      })
    ).json();
    expect(p2.deliveries).toHaveLength(1);
    expect(p2.nextCursor).toBeNull();
    const bad = await h.call("GET", `/api/v1/webhooks/${webhook.id}/deliveries?cursor=nope`, { key: o.key });
    expect(bad.status).toBe(400);
  });

  test("tries are counted for operators per event type and outcome", async () => {
    const text = await createApiMetrics().render();
    expect(text).toMatch(/webhook_deliveries_total\{event="site.published",outcome="delivered"\} [1-9]/);
    expect(text).toMatch(/webhook_deliveries_total\{event="site.published",outcome="http_error"\} [1-9]/);
    expect(text).toMatch(
      /webhook_delivery_duration_seconds_bucket\{le="[^"]+",event="site.published",outcome="timeout"\}/,
    );
  });
});
