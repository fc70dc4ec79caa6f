import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Clock,
  type Config,
  createLogger,
  DB_POOL_DEFAULTS,
  type Logger,
  loadConfig,
} from "@site/config";
import { connectDatabase, runInWriteScope, WriteScope } from "@site/db";
import { createTestDatabase, sharedPgBouncer, testServerUrl } from "@site/db/testing";
import {
  type Context,
  createApiKey,
  createKeyCache,
  createMember,
  createOrganization,
  type Role,
  type Scope,
} from "@site/domain/core";
import type { Mailer } from "@site/domain/newsletters";
import { startRenderWaits } from "@site/domain/screenshots";
import { startSocialPublisher } from "@site/domain/social";
import { createMemoryQueue, type JobQueue } from "@site/queue";
import type { Runtime } from "@site/runtime";
import { openRateLimiter } from "@site/runtime";
import { createPlatformAdapters } from "@site/social";
import { type ObjectStore, openFsStore } from "@site/storage";
import { createApp } from "../src/app.ts";

/** A test harness: the real app on a database of its own, with helpers to seed organizations and keys. */
export async function buildTestApp(
  opts: {
    env?: Record<string, string>;
    config?: Partial<Config>;
    store?: ObjectStore;
    queue?: JobQueue;
    /** Extra CA the guarded fetch trusts (HTTPS fixtures on loopback). */
    fetchTls?: { ca?: string | string[] };
    /**
     * Connects the app (not the harness's own `db`) to the test database through this rewrite of its
     * URL, e.g. a TCP proxy that takes the database away; with the configured timeouts.
     */
    dbVia?: (url: string) => string;
    /** Called with every statement the app sends (to count round trips). */
    onQuery?: (query: string) => void;
    /** The app's logger (default: silent, or TEST_LOG_LEVEL). */
    log?: Logger;
    /** Where the app's newsletter mail goes (default: from the configuration: SMTP_URL or the outbox). */
    mailer?: Mailer;
    /** The app's clock (default: the real one); a test moves it (scheduled posts, days ahead). */
    clock?: Clock;
    /** `false`: no social publisher in this process (a test runs its own, or another process). */
    socialPublisher?: false;
  } = {},
) {
  const handle = await createTestDatabase();
  // TEST_DATABASE_POOLER=pgbouncer: the app's database goes through a PgBouncer in transaction mode
  // (one per test process), unless the test routes it itself; the harness's own stays direct.
  const pooled =
    process.env.TEST_DATABASE_POOLER === "pgbouncer" && !opts.dbVia
      ? await sharedPgBouncer(testServerUrl())
      : null;
  const config = {
    ...loadConfig({
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      ...(pooled ? { DATABASE_POOLER: "transaction" } : {}),
      ...opts.env,
    }),
    ...opts.config,
  };
  const dbVia = opts.dbVia ?? (pooled ? (u: string) => pooled.via(u) : undefined);
  const appHandle =
    dbVia || opts.onQuery
      ? connectDatabase((dbVia ?? ((u: string) => u))(handle.url), {
          connectTimeoutMs: config.timeouts.dbConnectMs,
          statementTimeoutMs: config.timeouts.dbStatementMs,
          onQuery: opts.onQuery,
          pooler: config.databasePooler,
        })
      : null;
  const log = opts.log ?? createLogger((process.env.TEST_LOG_LEVEL as "debug") || ("silent" as never));
  // Verified keys cached as in a serving process, listening for revocations on the test database.
  const keys =
    config.apiKeyCacheTtlMs > 0
      ? createKeyCache({ databaseUrl: handle.url, ttlMs: config.apiKeyCacheTtlMs })
      : undefined;
  // Per-key limits when the test's configuration asks for them (Redis when REDIS_URL is set).
  const limiter = openRateLimiter(config);
  const ctx: Context = {
    config,
    db: appHandle?.db ?? handle.db,
    clock: opts.clock ?? { now: () => new Date() },
    log,
    keys,
    limiter,
  };
  // Media bytes: the given store, else a local-disk store in a temp dir removed by close().
  const storeDir = opts.store ? null : mkdtempSync(join(tmpdir(), "site-test-objects-"));
  const store =
    opts.store ??
    openFsStore({
      root: storeDir!,
      publicBaseUrl: config.publicBaseUrl,
      secretKey: config.secretKey,
      maxPutBytes: Math.max(10485760, config.social.videoMaxBytes),
      minFreeBytes: config.storageMinFreeBytes,
    });
  // The render queue: in-process unless the test brings its own (BullMQ on TEST_REDIS_URL).
  const queue = opts.queue ?? createMemoryQueue({ log });
  // Waiters on renders and clips share one LISTEN, as in a serving process.
  const renderWaits = startRenderWaits(handle.url);
  const app = createApp({ ...ctx, store, queue, fetchTls: opts.fetchTls, mailer: opts.mailer, renderWaits });
  // Social targets are published by jobs: this app's process takes them, as every API process does.
  const social =
    opts.socialPublisher === false
      ? null
      : startSocialPublisher({ ...ctx, store, queue }, createPlatformAdapters(ctx));
  // Each request in a write scope of its own, as the listener runs it (decision 0820).
  const call = (
    method: string,
    path: string,
    init: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) =>
    runInWriteScope(new WriteScope(), () =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: {
            ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
            ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
            ...init.headers,
          },
          body:
            init.body === undefined
              ? undefined
              : typeof init.body === "string"
                ? init.body
                : JSON.stringify(init.body),
        }),
      ),
    );
  /** An organization with a member of `role` and a key with `scopes`. */
  const seedOrg = async (
    o: {
      scopes?: Scope[];
      role?: Role;
      credits?: number;
      siteLimit?: number;
      storageQuotaBytes?: number;
    } = {},
  ) => {
    const org = await createOrganization(ctx, {
      name: `Org ${Math.random().toString(36).slice(2, 7)}`,
      credits: o.credits,
      siteLimit: o.siteLimit,
      storageQuotaBytes: o.storageQuotaBytes,
    });
    const user = await createMember(ctx, {
      orgId: org.id,
      email: `${Math.random().toString(36).slice(2)}@example.test`,
      role: o.role ?? "owner",
    });
    const key = await createApiKey(ctx, {
      orgId: org.id,
      userId: user.id,
      scopes: o.scopes ?? ["content:read", "content:write", "sites:write", "social:write"],
    });
    return { org, user, key: key.key, keyId: key.id };
  };
  /** A site created through the API with `key` (a fresh slug unless given): its id and slug. */
  const newSite = async (key: string, o: { name?: string; slug?: string } = {}) => {
    const slug = o.slug ?? `s-${Math.random().toString(36).slice(2, 11)}`;
    const res = await call("POST", "/api/v1/sites", { key, body: { name: o.name ?? "Site", slug } });
    if (res.status !== 201) throw new Error(`newSite: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { site: { id: string; slug: string } };
    return { id: body.site.id, slug: body.site.slug };
  };
  const close = async () => {
    await social?.stop({ graceMs: 0 });
    await renderWaits.close();
    await keys?.close();
    await limiter?.close();
    await queue.close();
    await appHandle?.sql.end({ timeout: 0 }).catch(() => {});
    await handle.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  };
  return {
    app,
    ctx: { ...ctx, store, queue },
    queue,
    /** The test database's URL, for subprocesses (a daemon under test). */
    databaseUrl: handle.url,
    db: handle.db,
    sql: handle.sql,
    call,
    seedOrg,
    newSite,
    store,
    /** The app's one LISTEN for renders and clips that end (its `waiting` counts sleeping waiters). */
    renderWaits,
    close,
  };
}

/** The harness type. */
export type TestApp = Awaited<ReturnType<typeof buildTestApp>>;

/**
 * The authorization rules every authenticated route keeps: 401 without or with a bad key, 403 without its
 * scope. Call it from each route's test file so a new route cannot forget them.
 */
export async function expectAuthRules(
  h: TestApp,
  route: { method: string; path: string; scope: Scope; body?: unknown },
): Promise<void> {
  const { expect } = await import("bun:test");
  const none = await h.call(route.method, route.path, { body: route.body });
  expect(none.status).toBe(401);
  expect(((await none.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
  const bad = await h.call(route.method, route.path, { body: route.body, key: "sk_not_a_real_key" });
  expect(bad.status).toBe(401);
  const others = (["content:read", "content:write", "sites:write", "social:write"] as Scope[]).filter(
    (s) => s !== route.scope,
  );
  const { key } = await h.seedOrg({ scopes: others });
  const forbidden = await h.call(route.method, route.path, { body: route.body, key });
  expect(forbidden.status).toBe(403);
  expect(((await forbidden.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
}

/** A Runtime over a test app's context, for starting a daemon in-process on the app's queue and store. */
export function runtimeOf(h: TestApp): Runtime {
  return {
    ...h.ctx,
    databaseUrl: "",
    listenUrl: null,
    dbPoolMax: h.ctx.config.dbPoolMax ?? DB_POOL_DEFAULTS.api,
    ownsEmbeddedDatabase: false,
    close: async () => {},
  };
}

/** An API started as its own process (`bun run apps/api`), as an operator runs it. */
export type ApiProcess = {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything it wrote on stderr so far (JSON log lines). */
  logs(): string;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
};

/**
 * Starts `bun run apps/api` (or `command`, e.g. `./scripts/start`, the all-in-one process) on a free
 * loopback port with `env` (DATABASE_URL at least); resolves once it listens.
 */
export async function spawnApi(
  env: Record<string, string>,
  opts: { command?: string[] } = {},
): Promise<ApiProcess> {
  const root = new URL("../../..", import.meta.url).pathname;
  const proc = Bun.spawn(opts.command ?? ["bun", "run", "apps/api"], {
    cwd: root,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      REDIS_URL: "",
      LOG_LEVEL: "info",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    const dec = new TextDecoder();
    const r = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await r.read();
      if (done) return;
      err += dec.decode(value);
    }
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  const deadline = Date.now() + 30_000;
  // `bun run apps/api` prints its URL alone; `./scripts/start` says "… (listening on <url>; …)".
  const listening = /^(http:\/\/\S+)$|listening on (http:\/\/[^\s;)]+)/m;
  while (!listening.test(out)) {
    if (Date.now() > deadline) throw new Error(`the API did not start: ${err.slice(-2000)}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`the API exited: ${err.slice(-2000)}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const seen = listening.exec(out)!;
  const url = (seen[1] ?? seen[2])!;
  return {
    url,
    proc,
    logs: () => err,
    kill: async () => {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
export {
  type ReceivedHook,
  startWebhookReceiver,
  verifyHook,
  type WebhookReceiver,
} from "./webhook_receiver.ts";
