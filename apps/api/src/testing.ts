import { loadConfig, fixedClock, createLogger, type Config } from "@site/config";
import { createTestDatabase } from "@site/db";
import {
  createApiKey,
  createMember,
  createOrganization,
  type Context,
  type Role,
  type Scope,
} from "@site/domain";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ObjectStore, openFsStore } from "@site/storage";
import { createMemoryQueue, type RenderQueue } from "@site/queue";
import { createApp } from "./app.ts";

/** A test harness: the real app on a database of its own, with helpers to seed organizations and keys. */
export async function buildTestApp(
  opts: {
    env?: Record<string, string>;
    config?: Partial<Config>;
    store?: ObjectStore;
    queue?: RenderQueue;
    /** Extra CA the guarded fetch trusts (HTTPS fixtures on loopback). */
    fetchTls?: { ca?: string | string[] };
  } = {},
) {
  const handle = await createTestDatabase();
  const config = {
    ...loadConfig({ SECRET_KEY: "test-secret-key-0123456789", DATA_DIR: "/tmp/site-test-data", ...opts.env }),
    ...opts.config,
  };
  const clock = fixedClock(new Date());
  const log = createLogger((process.env.TEST_LOG_LEVEL as "debug") || ("silent" as never));
  const ctx: Context = { config, db: handle.db, clock: { now: () => new Date() }, log };
  // Media bytes: the given store, else a local-disk store in a temp dir removed by close().
  const storeDir = opts.store ? null : mkdtempSync(join(tmpdir(), "site-test-objects-"));
  const store =
    opts.store ??
    openFsStore({
      root: storeDir!,
      publicBaseUrl: config.publicBaseUrl,
      secretKey: config.secretKey,
      maxPutBytes: 10485760,
    });
  // The render queue: in-process unless the test brings its own (BullMQ on TEST_REDIS_URL).
  const queue = opts.queue ?? createMemoryQueue({ log });
  const app = createApp({ ...ctx, store, queue, fetchTls: opts.fetchTls });
  const call = (
    method: string,
    path: string,
    init: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) =>
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
  const close = async () => {
    await queue.close();
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
    clock,
    store,
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
