/**
 * What every chaos scenario plays against: the hosts to import from and film, the backends
 * (PostgreSQL, Redis, s3rver) and two stacks of the apps that share them — "s3" (database `site`,
 * s3rver, queue prefix `chaos`, API + daemon) and "disk" (database `site_disk`, local files on a
 * size-limited tmpfs when this process may mount one, queue prefix `chaosdisk`; its daemon starts only
 * for the scenario that needs it).
 */
import { execSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger, loadConfig, systemClock } from "@site/config";
import { connectDatabase } from "@site/db";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture } from "@site/net/testing";
import { type ObjectStore, openObjectStore } from "@site/storage";
import postgres from "postgres";
import type { Scope } from "./checks.ts";
import type { Target } from "./load.ts";
import { createApp, createPostgres, createRedis, createS3, freePort, until } from "./services.ts";
import { BOUNDS } from "./settings.ts";
import type { Run } from "./verdict.ts";

/** One stack of the apps (API, daemon) on one database and storage. */
export type Stack = ReturnType<typeof stackOf>;

/** Everything the scenarios play against. */
export type World = Run & {
  /** Requests per path the two hosts have seen. */
  hits: Map<string, number>;
  /** HTTPS image host (a throwaway CA the apps trust). */
  imgOrigin: string;
  /** HTTP page host to film. */
  pageOrigin: string;
  pg: ReturnType<typeof createPostgres>;
  redis: ReturnType<typeof createRedis>;
  s3: ReturnType<typeof createS3>;
  s3Stack: Stack;
  diskStack: Stack;
  /** The disk stack's DATA_DIR. */
  diskDir: string;
  /** Whether diskDir is a 48 MiB tmpfs (mounting needs root). */
  tmpfs: boolean;
};

/** Starts the hosts, the backends and both stacks (the disk stack's daemon is left to its scenario). */
export async function startWorld(run: Run): Promise<World> {
  const { hits, imgOrigin, pageOrigin, caFile, allowHosts } = startHosts(run);

  const pg = createPostgres(join(run.dir, "pg"), run.logDir);
  run.procs.push(pg.proc);
  const redis = createRedis(run.logDir);
  run.procs.push(redis.proc);
  const s3 = createS3(join(run.dir, "s3"), run.logDir, "chaos-media");
  run.procs.push(s3.proc);
  await Promise.all([pg.start(), redis.start(), s3.start()]);
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin`create database site`;
  await admin`create database site_disk`;
  await admin.end();
  run.say(`backends up: postgres :${pg.port}, redis :${redis.port}, s3rver :${s3.port}`);

  // The disk stack's DATA_DIR: a 48 MiB tmpfs when this process may mount one (to fill it), else a folder.
  const diskDir = join(run.dir, "disk");
  mkdirSync(diskDir);
  let tmpfs = false;
  try {
    execSync(`mount -t tmpfs -o size=48m chaos-tmpfs ${diskDir}`, { stdio: "ignore" });
    tmpfs = true;
    run.cleanups.push(() => execSync(`umount -l ${diskDir}`, { stdio: "ignore" }));
  } catch {}

  const common = {
    SECRET_KEY: "chaos-secret-key-0123456789",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    REDIS_URL: redis.url,
    FETCH_ALLOW_HOSTS: allowHosts,
    NODE_EXTRA_CA_CERTS: caFile,
    ...BOUNDS,
    MEDIA_DAILY_UPLOAD_LIMIT: "100000",
    MEDIA_SWEEP_EVERY_MS: "1000",
    UPLOAD_TRANSFER_TIMEOUT_MS: "2000",
    MEDIA_ORPHAN_SWEEP_EVERY_MS: "2000",
    MEDIA_ORPHAN_GRACE_MS: "5000",
    RENDER_ORG_CONCURRENCY: "2",
    RENDER_CONCURRENCY: "2",
    RENDER_JOB_LOCK_MS: "2000",
    RENDER_SWEEP_EVERY_MS: "1000",
    RENDER_PAGE_DEADLINE_MS: "15000",
    API_KEY_CACHE_TTL_MS: "30000",
  };
  const s3Stack = stackOf(run, "s3", {
    ...common,
    DATABASE_URL: pg.url.replace(/\/postgres$/, "/site"),
    DATA_DIR: join(run.dir, "s3-data"),
    QUEUE_PREFIX: "chaos",
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_REGION: "us-east-1",
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    S3_FORCE_PATH_STYLE: "true",
  });
  await s3Stack.api.start(); // migrates `site`
  await s3Stack.daemon.start();
  const diskStack = stackOf(run, "disk", {
    ...common,
    DATABASE_URL: pg.url.replace(/\/postgres$/, "/site_disk"),
    DATA_DIR: diskDir,
    QUEUE_PREFIX: "chaosdisk",
    // Signed PUTs reach this API: longer than the SIGTERM grace, so a slow PUT meets the grace first.
    UPLOAD_TRANSFER_TIMEOUT_MS: "6000",
  });
  await diskStack.api.start(); // migrates `site_disk`
  run.say(
    `apps up: s3 API ${s3Stack.apiUrl} + daemon; disk API ${diskStack.apiUrl} (${tmpfs ? "48 MiB tmpfs" : "plain folder: no tmpfs"})`,
  );
  return {
    ...run,
    hits,
    imgOrigin,
    pageOrigin,
    pg,
    redis,
    s3,
    s3Stack,
    diskStack,
    diskDir,
    tmpfs,
  };
}

/**
 * Hosts to import from (HTTPS, a throwaway CA the apps trust through NODE_EXTRA_CA_CERTS) and to film
 * (HTTP, loopback); the apps may reach both through FETCH_ALLOW_HOSTS.
 */
function startHosts(run: Run) {
  const tls = createTlsFixture();
  const caFile = join(run.dir, "ca.pem");
  writeFileSync(caFile, tls.ca);
  const image = sampleImage("png", { width: 8, height: 8, size: 3000 });
  const hits = new Map<string, number>();
  const never: (() => void)[] = [];
  const imageHost = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
      if (url.pathname === "/never") {
        await new Promise<void>((r) => never.push(r)); // answers only when the run ends
        return new Response("late", { status: 500 });
      }
      await Bun.sleep(Number(url.searchParams.get("ms") ?? 0));
      return new Response(image, { headers: { "content-type": "image/png" } });
    },
  });
  run.cleanups.push(() => {
    for (const r of never) r();
    imageHost.stop(true);
  });
  const pageHtml = `<!doctype html><html><head><meta charset="utf-8"><title>Chaos</title></head>
<body style="margin:0;font:20px system-ui;background:#eef"><h1 style="padding:40px">A page under chaos</h1></body></html>`;
  const pageHost = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
      await Bun.sleep(Number(url.searchParams.get("ms") ?? 0));
      return new Response(pageHtml, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  run.cleanups.push(() => pageHost.stop(true));
  return {
    hits,
    caFile,
    imgOrigin: `https://localhost:${imageHost.port}`,
    pageOrigin: `http://127.0.0.1:${pageHost.port}`,
    allowHosts: `localhost:${imageHost.port},127.0.0.1:${pageHost.port}`,
  };
}

/** A stack's processes (not started) and its own clients to the database and storage, for the checks. */
function stackOf(run: Run, name: "s3" | "disk", env: Record<string, string>) {
  const apiPort = freePort();
  const daemonPort = freePort();
  const chromiumTmp = join(run.dir, `${name}-daemon-tmp`);
  mkdirSync(chromiumTmp);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const api = createApp(`${name}-api`, "apps/api", { ...env, PORT: String(apiPort) }, run.logDir, () =>
    until("API /healthz", async () => (await fetch(`${apiUrl}/healthz`)).status === 200, 60_000),
  );
  const daemon = createApp(
    `${name}-daemon`,
    "apps/render-daemon",
    { ...env, TMPDIR: chromiumTmp, RENDER_METRICS_PORT: String(daemonPort) },
    run.logDir,
    (p, since) =>
      until(
        "daemon taking jobs",
        () => p.output().slice(since).includes("render daemon taking jobs"),
        90_000,
      ),
  );
  run.procs.push(api.proc, daemon.proc);
  const config = loadConfig({ ...env, PORT: String(apiPort) });
  const db = connectDatabase(env.DATABASE_URL!, { max: 2 });
  const sql = postgres(env.DATABASE_URL!, { max: 2, onnotice: () => {} });
  const store: ObjectStore = openObjectStore(config);
  run.cleanups.push(
    () => db.close(),
    () => sql.end({ timeout: 1 }),
    () => store.close(),
  );
  const ctx: Context = { config, db: db.db, clock: systemClock, log: createLogger("error") };
  return {
    name,
    env,
    apiUrl,
    api,
    daemon,
    daemonPort,
    chromiumTmp,
    sql,
    store,
    ctx,
    objectsDir: name === "disk" ? join(run.dir, "disk", "objects") : null,
  };
}

/** A fresh organization (credits for renders), its key and a site, on a stack; `apiUrl` another API of it. */
export async function fresh(
  w: World,
  st: Stack,
  apiUrl = st.apiUrl,
): Promise<{ target: Target; scope: Scope }> {
  const org = await createOrganization(st.ctx, { name: "Chaos", credits: 10_000, siteLimit: 5 });
  const user = await createMember(st.ctx, {
    orgId: org.id,
    email: `chaos-${Math.random().toString(36).slice(2)}@example.test`,
    role: "owner",
  });
  const { key } = await createApiKey(st.ctx, {
    orgId: org.id,
    userId: user.id,
    scopes: ["content:read", "content:write", "sites:write"],
  });
  const res = await fetch(`${apiUrl}/api/v1/sites`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Chaos", slug: `chaos-${Math.random().toString(36).slice(2, 10)}` }),
  });
  if (res.status !== 201) throw new Error(`site creation answered ${res.status}: ${await res.text()}`);
  const siteId = ((await res.json()) as { site: { id: string } }).site.id;
  const target: Target = {
    api: apiUrl,
    key,
    siteId,
    imageUrl: (n) => `${w.imgOrigin}/img.png?ms=300&n=${n}`,
    pageUrl: (n) => `${w.pageOrigin}/page?n=${n}`,
    uploadBytes: sampleImage("png", { width: 16, height: 16, size: 20_000 }),
  };
  const scope: Scope = {
    sql: st.sql,
    store: st.store,
    api: apiUrl,
    key,
    orgId: org.id,
    siteId,
    objectsDir: st.objectsDir,
    chromiumTmp: [w.s3Stack.chromiumTmp, w.diskStack.chromiumTmp],
  };
  return { target, scope };
}
