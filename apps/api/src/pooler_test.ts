import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { connectDatabase, migrateDatabase } from "@site/db";
import { type PgBouncer, pgbouncerMissing, startPgBouncer, testServerUrl } from "@site/db/testing";
import { sampleImage } from "@site/domain/testing";
import { startWebhookDispatcher, type WebhookDispatcher } from "@site/domain/webhooks";
import postgres from "postgres";
import { buildTestApp, type TestApp } from "../testing/mod.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../testing/webhook_receiver.ts";

// CONTRACT "Many render hosts on one database" (issue 35): the API, webhook delivery and migrations
// through a real PgBouncer in transaction mode with its stock settings (no `ignore_startup_parameters`),
// LISTEN on the direct URL; and the polling fallback when LISTEN is not to be had.
const missing = pgbouncerMissing();
if (missing) console.warn(`pooler_test skipped: ${missing}`);

type Json = Record<string, any>;

/** PgBouncer's own counters for one database (its admin console, simple protocol). */
async function poolerStats(pgb: PgBouncer, database: string): Promise<{ xacts: number; queries: number }> {
  const admin = postgres(pgb.via(testServerUrl()).replace(/\/[^/?]*(\?|$)/, "/pgbouncer$1"), {
    max: 1,
    prepare: false,
    fetch_types: false,
    onnotice: () => {},
  });
  try {
    const rows = (await admin.unsafe("show stats").simple()) as Json[];
    const row = rows.find((r) => r.database === database);
    return { xacts: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
  } finally {
    await admin.end({ timeout: 0 });
  }
}

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

describe.skipIf(missing !== null)("through PgBouncer in transaction mode (stock settings)", () => {
  let pgb: PgBouncer;
  let rx: WebhookReceiver;
  let h: TestApp;
  let dispatcher: WebhookDispatcher | null = null;

  beforeAll(async () => {
    pgb = await startPgBouncer(testServerUrl());
    rx = startWebhookReceiver();
    h = await buildTestApp({
      env: {
        DATABASE_POOLER: "transaction",
        FETCH_ALLOW_HOSTS: rx.host,
        // A sweep this slow cannot be what delivers within the test: the NOTIFY heard on LISTEN is.
        WEBHOOK_SWEEP_EVERY_MS: "60000",
        WEBHOOK_RETRY_SCHEDULE_S: "0.3,0.3",
      },
      // The app's database goes through the pooler; the harness's own (and LISTEN) stay direct.
      dbVia: (url) => pgb.via(url),
    });
    // LISTEN on the direct URL (DATABASE_LISTEN_URL), as the contract says.
    dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: h.databaseUrl });
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await h?.close();
    rx?.stop();
    await pgb?.stop();
  });

  test("the API answers through the pooler: sites, publish, media upload and list", async () => {
    const before = await poolerStats(pgb, dbName(h.databaseUrl));
    const o = await h.seedOrg({ scopes: ["sites:write", "content:read", "content:write"] });
    const site = await h.newSite(o.key);
    expect((await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key })).status).toBe(200);
    const png = sampleImage("png", { width: 40, height: 30, size: 3000 });
    const prep = await h.call("POST", `/api/v1/sites/${site.id}/media/upload`, {
      key: o.key,
      body: { contentType: "image/png", size: png.length },
    });
    expect(prep.status).toBe(201);
    const upload = ((await prep.json()) as Json).upload;
    const put = await h.app.handle(
      new Request(upload.url.replace(/^https?:\/\/[^/]+/, "http://localhost"), {
        method: "PUT",
        headers: upload.headers,
        body: new Blob([png]),
      }),
    );
    expect(put.status).toBe(200);
    const list = await h.call("GET", `/api/v1/sites/${site.id}/media`, { key: o.key });
    expect(list.status).toBe(200);
    expect(((await list.json()) as Json).images).toHaveLength(1);
    // It really went through PgBouncer: its counters for the test database moved.
    const after = await poolerStats(pgb, dbName(h.databaseUrl));
    expect(after.xacts).toBeGreaterThan(before.xacts);
  });

  test("webhook delivery through the pooler (no named prepared statements), woken by LISTEN on the direct URL", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read"] });
    const res = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: rx.url("/pooled"), events: ["site.published"] },
    });
    expect(res.status).toBe(201);
    const hookId = ((await res.json()) as Json).webhook.id;
    const site = await h.newSite(o.key);
    expect((await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key })).status).toBe(200);
    const [got] = await rx.waitFor("/pooled", 1, 10_000);
    expect(got!.json.type).toBe("site.published");
    // The try is recorded as delivered (the settle ran through the pooler too).
    for (let i = 0; ; i++) {
      const d = (await (
        await h.call("GET", `/api/v1/webhooks/${hookId}/deliveries`, { key: o.key })
      ).json()) as Json;
      if (d.deliveries[0]?.status === "delivered") break;
      if (i > 100) throw new Error(`delivery not settled: ${JSON.stringify(d)}`);
      await Bun.sleep(50);
    }
  });

  test("a statement runs under the configured timeout inside a transaction (SET LOCAL, not a startup parameter)", async () => {
    const shown = await h.ctx.db.transaction(async (tx) => {
      const r = (await tx.execute("show statement_timeout" as never)) as unknown as Json[];
      return r[0]!.statement_timeout as string;
    });
    expect(shown).toBe("15s");
  });

  test("migrations through the pooler: two processes at once, each applied once", async () => {
    const admin = postgres(testServerUrl(), { max: 1, onnotice: () => {} });
    const name = `t_pool_${Date.now().toString(36)}`;
    await admin.unsafe(`create database ${name}`);
    try {
      const url = new URL(testServerUrl());
      url.pathname = `/${name}`;
      const a = connectDatabase(pgb.via(url.toString()), { pooler: "transaction", max: 2 });
      const b = connectDatabase(pgb.via(url.toString()), { pooler: "transaction", max: 2 });
      await Promise.all([migrateDatabase(a), migrateDatabase(b)]);
      const direct = postgres(url.toString(), { max: 1, onnotice: () => {} });
      const applied =
        await direct`select count(*)::int as n, count(distinct hash)::int as d from drizzle.__drizzle_migrations`;
      expect(applied[0]!.n).toBe(applied[0]!.d);
      expect(applied[0]!.n).toBeGreaterThan(10);
      await direct.end();
      await a.close();
      await b.close();
    } finally {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  test("more processes start at once than the pooler has server connections: migrations do not deadlock (1504)", async () => {
    // A pool of 2: four starters waiting in pg_advisory_xact_lock took both server connections and the
    // holder's migrations waited for a third until PgBouncer's query_wait_timeout (120 s).
    const small = await startPgBouncer(testServerUrl(), { poolSize: 2 });
    const admin = postgres(testServerUrl(), { max: 1, onnotice: () => {} });
    const name = `t_pool_${Date.now().toString(36)}_s`;
    await admin.unsafe(`create database ${name}`);
    const url = new URL(testServerUrl());
    url.pathname = `/${name}`;
    const handles = Array.from({ length: 4 }, () =>
      connectDatabase(small.via(url.toString()), { pooler: "transaction", max: 2 }),
    );
    try {
      const all = Promise.all(handles.map((h) => migrateDatabase(h)));
      const late = Bun.sleep(30_000).then(() => "deadlocked" as const);
      expect(await Promise.race([all.then(() => "migrated" as const), late])).toBe("migrated");
    } finally {
      await Promise.all(handles.map((h) => h.close().catch(() => {})));
      await small.stop();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

describe.skipIf(missing !== null)("without a working LISTEN: polling, said at start", () => {
  let pgb: PgBouncer;
  let rx: WebhookReceiver;
  let h: TestApp;
  let dispatcher: WebhookDispatcher | null = null;
  const lines: string[] = [];

  beforeAll(async () => {
    pgb = await startPgBouncer(testServerUrl());
    rx = startWebhookReceiver();
    h = await buildTestApp({
      env: {
        DATABASE_POOLER: "transaction",
        DATABASE_LISTEN_POLL_MS: "200",
        FETCH_ALLOW_HOSTS: rx.host,
        WEBHOOK_SWEEP_EVERY_MS: "60000",
      },
      dbVia: (url) => pgb.via(url),
      log: createLogger("info", {}, { sink: (line) => lines.push(line) }),
    });
    // The LISTEN URL points where nothing listens (a port just closed).
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const closed = probe.port;
    probe.stop(true);
    const unusable = new URL(h.databaseUrl);
    unusable.port = String(closed);
    dispatcher = startWebhookDispatcher(h.ctx, { databaseUrl: unusable.toString() });
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await h?.close();
    rx?.stop();
    await pgb?.stop();
  });

  test("deliveries still go out, and the log says it polls and how often", async () => {
    const o = await h.seedOrg({ scopes: ["webhooks:write", "sites:write", "content:read"] });
    const res = await h.call("POST", "/api/v1/webhooks", {
      key: o.key,
      body: { url: rx.url("/polled"), events: ["site.published"] },
    });
    expect(res.status).toBe(201);
    const site = await h.newSite(o.key);
    expect((await h.call("POST", `/api/v1/sites/${site.id}/publish`, { key: o.key })).status).toBe(200);
    // Well before the 60 s sweep: the 200 ms poll found it.
    await rx.waitFor("/polled", 1, 10_000);
    const said = lines.map((l) => JSON.parse(l) as Json).find((l) => /polling/i.test(l.msg));
    expect(said).toBeDefined();
    expect(said!.pollMs).toBe(200);
    expect(said!.msg).toContain("every 200 ms");
  });
});
