/**
 * The chaos run (issues 14 and 18), by hand: `bun scripts/chaos/run.ts [--only <scenario>] [--json <file>]
 * [--keep]`.
 *
 * Starts its own PostgreSQL (a throwaway cluster), Redis and S3-compatible server (s3rver) on free
 * loopback ports, an HTTPS image host and an HTTP page host on loopback, and runs the API and the render
 * daemon as separate processes (`bun run apps/api`, `bun run apps/render-daemon`) against them. Then
 * plays each scenario under a load of a few requests a second (keyed reads, URL imports, signed uploads,
 * screenshots) and prints one table: requests, statuses seen, the longest answer, the recovery time after
 * the dependency came back (first success), and the data checks. Everything it started is killed and
 * its folders removed at the end, on failure too (`--keep` keeps the folder with every process's log).
 *
 * Two stacks share the servers: "s3" (database `site`, s3rver, queue prefix `chaos`) and "disk"
 * (database `site_disk`, local files on a size-limited tmpfs when this process may mount one, queue
 * prefix `chaosdisk`), so that signed PUTs through the API and a full disk can be played too.
 */
import { execSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createLogger, loadConfig, systemClock } from "@site/config";
import { connectDatabase } from "@site/db";
import { createApiKey, createMember, createOrganization, type Context } from "@site/domain/core";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture } from "@site/net/testing";
import { type ObjectStore, openObjectStore } from "@site/storage";
import { type Check, filesAndQuota, ledger, na, orphans, type Scope, tempFiles } from "./checks.ts";
import { DEFAULT_MIX, firstSuccess, type Mix, play, Recorder, startLoad, type Target } from "./load.ts";
import {
  createApp,
  createPostgres,
  createRedis,
  createS3,
  freePort,
  pidsMentioning,
  type Proc,
  until,
} from "./services.ts";

// ---- settings -------------------------------------------------------------------------------------

const args = process.argv.slice(2);
const argOf = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ONLY = argOf("--only");
const JSON_OUT = argOf("--json");
const KEEP = args.includes("--keep");
const RPS = Number(process.env.CHAOS_RPS ?? 4);

/** The bounds the apps run with; "no answer slower than the configured bound" is checked against BOUND_MS. */
const BOUNDS = {
  DB_CONNECT_TIMEOUT_MS: "1000",
  DB_STATEMENT_TIMEOUT_MS: "5000",
  REDIS_COMMAND_TIMEOUT_MS: "1000",
  STORAGE_TIMEOUT_MS: "2000",
  READY_CHECK_TIMEOUT_MS: "500",
  IMPORT_TIMEOUT_MS: "3000",
  SHUTDOWN_GRACE_MS: "4000",
  RETRY_AFTER_SECONDS: "2",
};
/**
 * The longest answer allowed: the slowest bounded path is an import (IMPORT_TIMEOUT_MS, 3 s) whose
 * storage write then waits STORAGE_TIMEOUT_MS twice (two attempts); a SIGTERM adds at most the grace.
 */
const BOUND_MS = 3000 + 2 * 2000 + 1000;
/** "Automatic recovery within 5 s of the dependency's return" (issue 14); renders 10 s (issue 18.4). */
const RECOVERY_MS = 5000;
const RENDER_RECOVERY_MS = 10_000;

// ---- everything this run starts, and its cleanup ---------------------------------------------------

const runDir = mkdtempSync(join(tmpdir(), "site-chaos-"));
chmodSync(runDir, 0o755);
const logDir = join(runDir, "logs");
mkdirSync(logDir);
const procs: Proc[] = [];
const cleanups: (() => unknown)[] = [];
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  // Processes first (a lazy unmount then frees the tmpfs at once), then servers, clients and mounts.
  for (const p of procs.reverse()) await p.kill().catch(() => {});
  // Browsers of the daemons (their own process groups) end with their pipe; any still here are
  // SIGKILLed by pid (they name this run's folder) before the folder goes.
  for (let i = 0; i < 50 && pidsMentioning(runDir).length; i++) {
    if (i === 20)
      for (const pid of pidsMentioning(runDir))
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
    await Bun.sleep(100);
  }
  // Each bounded: a close that never settles must not end the process before the folder is removed
  // (the timer keeps the event loop alive).
  for (const c of cleanups.reverse()) {
    try {
      await Promise.race([Promise.resolve().then(c), Bun.sleep(3000)]);
    } catch {}
  }
  if (KEEP) console.log(`kept ${runDir} (logs in ${logDir})`);
  else rmSync(runDir, { recursive: true, force: true, maxRetries: 5 });
}
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    void cleanup().then(() => process.exit(130));
  });

// ---- results ---------------------------------------------------------------------------------------

type Row = {
  scenario: string;
  requests: number;
  statuses: Record<string, number>;
  longestMs: number;
  recoveryMs: number | null;
  checks: { files: Check; quota: Check; ledger: Check; tmp: Check; chromium: Check; scenario: Check };
  problems: string[];
  pass: boolean;
  notes: string[];
  /** Every answer that was not 2xx, in short (for --json). */
  errors?: string[];
};
const rows: Row[] = [];

// ---- main ------------------------------------------------------------------------------------------

const t0 = performance.now();
try {
  await main();
} catch (err) {
  console.error("chaos run failed:", err);
  process.exitCode = 1;
} finally {
  if (rows.length) printTable();
  if (JSON_OUT) {
    writeFileSync(
      JSON_OUT,
      JSON.stringify({ at: new Date().toISOString(), tookS: (performance.now() - t0) / 1000, rows }, null, 2),
    );
    console.log(`results written to ${JSON_OUT}`);
  }
  await cleanup();
}
if (rows.some((r) => !r.pass)) process.exitCode = 1;

async function main() {
  const say = (msg: string) =>
    console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}`);

  // Hosts to import from (HTTPS, a throwaway CA the apps trust through NODE_EXTRA_CA_CERTS) and to film
  // (HTTP, loopback; the apps may reach them through FETCH_ALLOW_HOSTS).
  const tls = createTlsFixture();
  const caFile = join(runDir, "ca.pem");
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
  cleanups.push(() => {
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
  cleanups.push(() => pageHost.stop(true));
  const imgOrigin = `https://localhost:${imageHost.port}`;
  const pageOrigin = `http://127.0.0.1:${pageHost.port}`;

  // Backends.
  const pg = createPostgres(join(runDir, "pg"), logDir);
  procs.push(pg.proc);
  const redis = createRedis(logDir);
  procs.push(redis.proc);
  const s3 = createS3(join(runDir, "s3"), logDir, "chaos-media");
  procs.push(s3.proc);
  await Promise.all([pg.start(), redis.start(), s3.start()]);
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin`create database site`;
  await admin`create database site_disk`;
  await admin.end();
  say(`backends up: postgres :${pg.port}, redis :${redis.port}, s3rver :${s3.port}`);

  // The disk stack's DATA_DIR: a 48 MiB tmpfs when this process may mount one (to fill it), else a folder.
  const diskDir = join(runDir, "disk");
  mkdirSync(diskDir);
  let tmpfs = false;
  try {
    execSync(`mount -t tmpfs -o size=48m chaos-tmpfs ${diskDir}`, { stdio: "ignore" });
    tmpfs = true;
    cleanups.push(() => execSync(`umount -l ${diskDir}`, { stdio: "ignore" }));
  } catch {}

  const common = {
    SECRET_KEY: "chaos-secret-key-0123456789",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    REDIS_URL: redis.url,
    FETCH_ALLOW_HOSTS: `localhost:${imageHost.port},127.0.0.1:${pageHost.port}`,
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
  const s3Env = {
    ...common,
    DATABASE_URL: pg.url.replace(/\/postgres$/, "/site"),
    DATA_DIR: join(runDir, "s3-data"),
    QUEUE_PREFIX: "chaos",
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_REGION: "us-east-1",
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    S3_FORCE_PATH_STYLE: "true",
  };
  const diskEnv = {
    ...common,
    DATABASE_URL: pg.url.replace(/\/postgres$/, "/site_disk"),
    DATA_DIR: diskDir,
    QUEUE_PREFIX: "chaosdisk",
    // Signed PUTs reach this API: longer than the SIGTERM grace, so a slow PUT meets the grace first.
    UPLOAD_TRANSFER_TIMEOUT_MS: "6000",
  };

  type Stack = ReturnType<typeof stackOf>;
  const stackOf = (name: "s3" | "disk", env: Record<string, string>) => {
    const apiPort = freePort();
    const daemonPort = freePort();
    const chromiumTmp = join(runDir, `${name}-daemon-tmp`);
    mkdirSync(chromiumTmp);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const api = createApp(`${name}-api`, "apps/api", { ...env, PORT: String(apiPort) }, logDir, () =>
      until("API /healthz", async () => (await fetch(`${apiUrl}/healthz`)).status === 200, 60_000),
    );
    const daemon = createApp(
      `${name}-daemon`,
      "apps/render-daemon",
      { ...env, TMPDIR: chromiumTmp, RENDER_METRICS_PORT: String(daemonPort) },
      logDir,
      (p, since) =>
        until(
          "daemon taking jobs",
          () => p.output().slice(since).includes("render daemon taking jobs"),
          90_000,
        ),
    );
    procs.push(api.proc, daemon.proc);
    const config = loadConfig({ ...env, PORT: String(apiPort) });
    const db = connectDatabase(env.DATABASE_URL!, { max: 2 });
    const sql = postgres(env.DATABASE_URL!, { max: 2, onnotice: () => {} });
    const store: ObjectStore = openObjectStore(config);
    cleanups.push(
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
      objectsDir: name === "disk" ? join(diskDir, "objects") : null,
    };
  };

  const s3Stack = stackOf("s3", s3Env);
  await s3Stack.api.start(); // migrates `site`
  await s3Stack.daemon.start();
  const diskStack = stackOf("disk", diskEnv);
  await diskStack.api.start(); // migrates `site_disk`
  say(
    `apps up: s3 API ${s3Stack.apiUrl} + daemon; disk API ${diskStack.apiUrl} (${tmpfs ? "48 MiB tmpfs" : "plain folder: no tmpfs"})`,
  );

  /** A fresh organization (credits for renders), its key and a site, on a stack. */
  const fresh = async (st: Stack, apiUrl = st.apiUrl) => {
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
      imageUrl: (n) => `${imgOrigin}/img.png?ms=300&n=${n}`,
      pageUrl: (n) => `${pageOrigin}/page?n=${n}`,
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
      chromiumTmp: [s3Stack.chromiumTmp, diskStack.chromiumTmp],
    };
    return { target, scope };
  };

  /** Waits (bounded) until no render of the scope's organization is pending. */
  const settled = (scope: Scope, ms = 90_000) =>
    until(
      "renders settled",
      async () => {
        const [r] = await scope.sql<{ n: number }[]>`
          select count(*)::int as n from screenshot_renders where org_id = ${scope.orgId} and status = 'pending'`;
        return r?.n === 0;
      },
      // Renders run 2 at a time per daemon (and per organization): a burst takes a while.
      ms,
    ).catch(() => {});

  /** Waits for the scope's renders to settle (bounded), then runs the data checks. */
  const dataChecks = async (
    scope: Scope,
    opts: { tmp?: boolean; settleMs?: number } = {},
  ): Promise<Pick<Row["checks"], "files" | "quota" | "ledger" | "tmp" | "chromium">> => {
    await settled(scope, opts.settleMs);
    // Uploads land and orphans go within a few sweeps: poll until consistent (or the bound).
    let fq = await filesAndQuota(scope);
    const deadline = Date.now() + 15_000;
    while ((!fq.files.ok || !fq.quota.ok) && Date.now() < deadline) {
      await Bun.sleep(500);
      fq = await filesAndQuota(scope);
    }
    let tmp: Check = na(scope.objectsDir ? undefined : "n/a (S3)");
    if (opts.tmp !== false && scope.objectsDir) {
      let left = tempFiles(scope);
      // Swept once older than twice the longest transfer (UPLOAD_TRANSFER_TIMEOUT_MS 6 s on disk).
      const until2 = Date.now() + 25_000;
      while (left > 0 && Date.now() < until2) {
        await Bun.sleep(500);
        left = tempFiles(scope);
      }
      tmp = left === 0 ? { ok: true, text: "0 left" } : { ok: false, text: `${left} left` };
    }
    const o = orphans(scope);
    return {
      files: fq.files,
      quota: fq.quota,
      ledger: await ledger(scope),
      tmp,
      chromium: o === 0 ? { ok: true, text: "0" } : { ok: false, text: `${o} orphans` },
    };
  };

  /** Judges a scenario's requests: no 500 (or other unexpected 5xx), answers within the bound, Retry-After. */
  const judge = (
    r: Recorder,
    opts: { allowCut?: boolean; allowTimeout?: boolean } = {},
  ): { statuses: Record<string, number>; longestMs: number; problems: string[]; requests: number } => {
    const api = r.recs.filter((x) => x.kind !== "s3-put");
    const statuses: Record<string, number> = {};
    for (const x of api) statuses[x.outcome] = (statuses[x.outcome] ?? 0) + 1;
    const problems: string[] = [];
    const answered = api.filter((x) => /^\d+$/.test(x.outcome));
    const longestMs = Math.max(0, ...answered.map((x) => x.t1 - x.t0));
    for (const x of api) {
      const code = Number(x.outcome);
      if (code >= 500 && ![503, 504, 507].includes(code))
        problems.push(`${x.kind} ${x.outcome}: ${x.body?.slice(0, 160)}`);
      if ([503, 507].includes(code) && !x.retryAfter) problems.push(`${x.kind} ${code} without Retry-After`);
      if (!opts.allowCut && ["refused", "no answer"].includes(x.outcome))
        problems.push(`${x.kind}: ${x.outcome}`);
      if (x.outcome === "timeout" && !opts.allowTimeout) problems.push(`${x.kind}: no answer in 30 s`);
    }
    if (longestMs > BOUND_MS) {
      const slow = answered
        .filter((x) => x.t1 - x.t0 > BOUND_MS)
        .slice(0, 3)
        .map(
          (x) =>
            `${x.kind} ${x.outcome} in ${(x.t1 - x.t0).toFixed(0)} ms at +${((x.t0 - t0) / 1000).toFixed(1)} s`,
        );
      problems.push(`an answer took ${longestMs.toFixed(0)} ms (bound ${BOUND_MS}): ${slow.join(", ")}`);
    }
    return { statuses, longestMs, problems: [...new Set(problems)].slice(0, 6), requests: api.length };
  };

  const record = (
    scenario: string,
    r: Recorder,
    recoveryMs: number | null,
    recoveryBound: number | null,
    checks: Omit<Row["checks"], "scenario">,
    special: Check,
    notes: string[],
    judged = judge(r),
  ) => {
    const problems = [...judged.problems];
    if (recoveryBound !== null && (recoveryMs === null || recoveryMs > recoveryBound))
      problems.push(
        `recovery ${recoveryMs === null ? "never" : `${recoveryMs.toFixed(0)} ms`} > ${recoveryBound} ms`,
      );
    const all = { ...checks, scenario: special };
    for (const [k, c] of Object.entries(all)) if (c.ok === false) problems.push(`${k}: ${c.text}`);
    const row: Row = {
      scenario,
      requests: judged.requests,
      statuses: judged.statuses,
      longestMs: judged.longestMs,
      recoveryMs,
      checks: all,
      problems,
      pass: problems.length === 0,
      notes,
      errors: r.recs
        .filter((x) => !/^2\d\d$/.test(x.outcome))
        .map((x) => `${x.kind} ${x.outcome} ${(x.t1 - x.t0).toFixed(0)} ms ${x.body ?? ""}`.slice(0, 240)),
    };
    rows.push(row);
    say(`${scenario}: ${row.pass ? "pass" : `FAIL (${problems.join(" | ")})`}`);
  };

  /**
   * A dependency killed under load and brought back: baseline 3 s, down `downMs`, back, then the first
   * success of `probeKind` after its return, 3 s more, and the checks.
   */
  const outage = async (
    scenario: string,
    st: Stack,
    opts: {
      kill: () => Promise<void>;
      back: () => Promise<void>;
      probeKind: "read" | "import" | "screenshot";
      downMs?: number;
      mix?: Mix;
      notes?: (r: Recorder) => string[];
    },
  ) => {
    const { target, scope } = await fresh(st);
    const r = new Recorder();
    const load = startLoad(r, target, RPS, opts.mix ?? DEFAULT_MIX);
    // Screenshots beyond an organization's admitted renders wait in the database (202) and touch no
    // queue: the queue's probe is a second organization with nothing in progress, whose render is
    // admitted and enqueued at once (a screenshot every second while the queue is away).
    const probe = opts.probeKind === "screenshot" ? await fresh(st) : null;
    const probeKind = probe ? "enqueue" : opts.probeKind;
    const probeOnce = () =>
      probe ? play(r, probe.target, "screenshot", "enqueue") : play(r, target, opts.probeKind);
    await Bun.sleep(3000);
    await opts.kill();
    say(`${scenario}: killed`);
    const downUntil = performance.now() + (opts.downMs ?? 6000);
    let burst = !!probe;
    for (let left = downUntil - performance.now(); left > 0; left = downUntil - performance.now()) {
      if (probe) void probeOnce();
      if (burst && left < 1500) {
        // Just before the queue returns, a burst of 8 screenshots of the probe's organization at once:
        // two are admitted (their enqueue fails: refunded, 503), the rest wait their turn (202) and must
        // all be rendered once it is back.
        burst = false;
        for (let i = 0; i < 8; i++) void play(r, probe!.target, "screenshot", "burst");
      }
      await Bun.sleep(Math.min(1000, left));
    }
    await opts.back();
    const since = performance.now();
    say(`${scenario}: back`);
    const recovery = await firstSuccess(r, since, probeKind, probeOnce);
    await Bun.sleep(3000);
    await load.stop();
    const checks = await dataChecks(scope);
    if (probe) {
      await settled(probe.scope);
      const more = await ledger(probe.scope);
      checks.ledger = {
        ok: checks.ledger.ok !== false && more.ok !== false,
        text: `${checks.ledger.text}; queue probe: ${more.text}`,
      };
    }
    record(scenario, r, recovery, RECOVERY_MS, checks, na(), opts.notes?.(r) ?? []);
  };

  const scenarios: Record<string, () => Promise<void>> = {
    "database killed": () =>
      outage("database killed", s3Stack, {
        kill: () => pg.proc.kill(),
        back: () => pg.start(),
        probeKind: "read",
      }),
    "redis killed": () =>
      outage("redis killed", s3Stack, {
        kill: () => redis.proc.kill(),
        back: () => redis.start(),
        probeKind: "screenshot",
        mix: { read: 0.5, import: 0.1, upload: 0.1, screenshot: 0.3 },
      }),
    "storage down": () =>
      outage("storage down", s3Stack, {
        kill: () => s3.proc.kill(),
        back: () => s3.start(),
        probeKind: "import",
        mix: { read: 0.4, import: 0.3, upload: 0.25, screenshot: 0.05 },
      }),
    "API killed (S3)": () => apiKilled("API killed (S3)", s3Stack),
    "API killed (disk)": () => apiKilled("API killed (disk)", diskStack),
    "daemon killed": () => daemonKilled(),
    "API SIGTERM": () => sigterm(),
    "fetch limit": () => fetchLimit(),
    "disk full": () => diskFull(),
  };

  /** The API SIGKILLed with imports and uploads in flight (signed PUTs through it on the disk stack). */
  const apiKilled = async (scenario: string, st: Stack) => {
    const { target, scope } = await fresh(st);
    target.imageUrl = (n) => `${imgOrigin}/img.png?ms=1500&n=${n}`;
    const r = new Recorder();
    const load = startLoad(r, target, RPS, { read: 0.3, import: 0.35, upload: 0.35, screenshot: 0 });
    await Bun.sleep(3000);
    // Trickling PUTs through the API (disk) so some are half-written at the kill.
    const trickles = st.name === "disk" ? await startTrickles(r, target, 3, 1024 * 1024, 40, 100) : [];
    await Bun.sleep(800);
    const inTmp = tempFiles(scope);
    await st.api.proc.kill();
    const upMs = await st.api.start();
    const since = performance.now();
    const recovery = await firstSuccess(r, since, "read", () => play(r, target, "read"));
    await Bun.sleep(3000);
    await load.stop();
    await Promise.all(trickles);
    const checks = await dataChecks(scope);
    record(
      scenario,
      r,
      recovery,
      RECOVERY_MS,
      checks,
      na(),
      [
        `restarted API served after ${upMs.toFixed(0)} ms`,
        ...(st.name === "disk" ? [`${inTmp} temporary files at the kill`] : []),
      ],
      judge(r, { allowCut: true }),
    );
  };

  /** `n` signed uploads whose PUT bodies trickle (`chunks` pieces every `everyMs`) through the API. */
  const startTrickles = async (
    r: Recorder,
    t: Target,
    n: number,
    bytes: number,
    chunks: number,
    everyMs: number,
  ) => {
    const big = sampleImage("png", { width: 50, height: 50, size: bytes });
    const out: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const prep = await r.call("upload", `${t.api}/api/v1/sites/${t.siteId}/media/upload`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: JSON.stringify({ contentType: "image/png", size: big.byteLength }),
      });
      if (prep?.res.status !== 201) continue;
      const size = Math.ceil(big.byteLength / chunks);
      let k = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (k * size >= big.byteLength) return c.close();
          if (k > 0) await Bun.sleep(everyMs);
          c.enqueue(big.subarray(k * size, (k + 1) * size));
          k++;
        },
      });
      out.push(
        r.call("put", prep.json.upload.url, {
          method: "PUT",
          headers: { ...prep.json.upload.headers, "content-length": String(big.byteLength) },
          body,
          duplex: "half",
        } as RequestInit),
      );
    }
    return out;
  };

  /** 18.4/18.6: the daemon SIGKILLed with renders in progress, restarted. */
  const daemonKilled = async () => {
    const st = s3Stack;
    const { target, scope } = await fresh(st);
    const r = new Recorder();
    const load = startLoad(r, target, RPS, { read: 0.8, import: 0.1, upload: 0.1, screenshot: 0 });
    // Two renders of a page that takes 4 s to answer: both in progress when the daemon dies.
    const before = hits.get("/slow") ?? 0;
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const out = await r.call("screenshot", `${target.api}/api/v1/sites/${target.siteId}/media/screenshot`, {
        method: "POST",
        headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          url: `${pageOrigin}/slow?ms=4000&i=${i}`,
          viewportWidth: 800,
          viewportHeight: 500,
        }),
      });
      if (out?.res.status === 202) ids.push(out.json.renderId);
    }
    await until("both renders filming", () => (hits.get("/slow") ?? 0) >= before + ids.length, 60_000);
    const attempts = async () =>
      scope.sql<{ id: string; status: string; attempts: number }[]>`
        select id, status, attempts from screenshot_renders where id in ${scope.sql(ids)} order by id`;
    const atKill = await attempts();
    const killedPid = st.daemon.proc.pid;
    await st.daemon.proc.kill();
    // Its browsers talk over a pipe that closes with it: they should go by themselves, before any restart.
    const killedAt = performance.now();
    const leftAfterKill = orphans(scope);
    let goneMs: number | null = null;
    await until(
      "browsers of the killed daemon gone",
      () => {
        if (orphans(scope) > 0) return false;
        goneMs = performance.now() - killedAt;
        return true;
      },
      10_000,
    ).catch(() => {});
    const upMs = await st.daemon.start();
    const since = performance.now();
    let recovery: number | null = null;
    await until(
      "renders running again",
      async () => {
        const now = await attempts();
        const again = now.every((x, i) => x.attempts > atKill[i]!.attempts || x.status === "done");
        if (again) recovery = performance.now() - since;
        return again;
      },
      30_000,
    ).catch(() => {});
    await Bun.sleep(1000);
    await load.stop();
    const checks = await dataChecks(scope);
    const final = await attempts();
    const done = final.filter((x) => x.status === "done").length;
    record(
      "daemon killed",
      r,
      recovery,
      RENDER_RECOVERY_MS,
      checks,
      done === ids.length && ids.length === 2
        ? { ok: true, text: `${done}/2 renders done` }
        : { ok: false, text: `${done}/${ids.length} renders done (${final.map((x) => x.status).join(",")})` },
      [
        `killed daemon pid ${killedPid}: ${leftAfterKill} of its Chromium processes alive just after the kill, ${
          goneMs === null
            ? `${orphans(scope)} still alive 10 s later (the restart's sweep must kill them)`
            : `all gone ${(goneMs as number).toFixed(0)} ms after it, before the restart`
        }`,
        `restarted daemon took jobs after ${upMs.toFixed(0)} ms; recovery = renders on a new try after that`,
      ],
    );
  };

  /** 18.3: SIGTERM with slow imports and trickling signed PUTs in flight (disk stack: PUTs reach the API). */
  const sigterm = async () => {
    const st = diskStack;
    const { target, scope } = await fresh(st);
    const r = new Recorder();
    const load = startLoad(r, target, RPS, { read: 0.5, import: 0.25, upload: 0.25, screenshot: 0 });
    await Bun.sleep(2000);
    // 10 slow imports (2.5 s) and 5 trickling PUTs: 3 finish within the 4 s grace, 2 would take 10 s.
    const slow: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++)
      slow.push(
        r.call("import", `${target.api}/api/v1/sites/${target.siteId}/media/import-url`, {
          method: "POST",
          headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
          body: JSON.stringify({ url: `${imgOrigin}/img.png?ms=2500&slow=${i}` }),
        }),
      );
    slow.push(...(await startTrickles(r, target, 3, 512 * 1024, 10, 150)));
    slow.push(...(await startTrickles(r, target, 2, 512 * 1024, 40, 200)));
    await Bun.sleep(500);
    const signalAt = performance.now();
    st.api.proc.signal("SIGTERM");
    const exit = await st.api.proc.exited(20_000);
    const stoppedMs = performance.now() - signalAt;
    await Promise.all(slow);
    const inFlight = r.recs.filter((x) => x.t0 < signalAt && x.t1 > signalAt);
    const unanswered = inFlight.filter((x) => !/^\d+$/.test(x.outcome));
    const logged = st.api.proc.output().includes('"msg":"api stopped"');
    const upMs = await st.api.start();
    const since = performance.now();
    const recovery = await firstSuccess(r, since, "read", () => play(r, target, "read"));
    await Bun.sleep(2000);
    await load.stop();
    const checks = await dataChecks(scope);
    // Requests sent after the signal may be refused (the listener is closed): not in flight.
    const judged = judge(r, { allowCut: true });
    for (const x of r.recs)
      if (x.t0 < signalAt && ["no answer", "timeout"].includes(x.outcome))
        judged.problems.push(`${x.kind} in flight got no answer`);
    const by = (o: string) => inFlight.filter((x) => x.outcome === o).length;
    record(
      "API SIGTERM",
      r,
      recovery,
      RECOVERY_MS,
      checks,
      unanswered.length === 0 && exit === 0 && logged
        ? {
            ok: true,
            text: `${inFlight.length}/${inFlight.length} in flight answered (${Object.entries(
              Object.fromEntries(["200", "201", "503", "504"].map((o) => [o, by(o)])),
            )
              .filter(([, n]) => n)
              .map(([o, n]) => `${n}×${o}`)
              .join(", ")}), exit 0`,
          }
        : {
            ok: false,
            text: `${unanswered.length} of ${inFlight.length} in flight unanswered; exit ${exit}; logged ${logged}`,
          },
      [
        `stopped ${stoppedMs.toFixed(0)} ms after SIGTERM (grace ${BOUNDS.SHUTDOWN_GRACE_MS} ms)`,
        `restarted in ${upMs.toFixed(0)} ms`,
      ],
      judged,
    );
  };

  /** 18.1: 20 concurrent imports of a URL that never answers, MEDIA_DAILY_FETCH_ATTEMPT_LIMIT=5. */
  const fetchLimit = async () => {
    const st = s3Stack;
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = createApp(
      "s3-api-limit5",
      "apps/api",
      { ...st.env, PORT: String(port), MEDIA_DAILY_FETCH_ATTEMPT_LIMIT: "5" },
      logDir,
      () => until("API /healthz", async () => (await fetch(`${url}/healthz`)).status === 200, 60_000),
    );
    procs.push(api.proc);
    await api.start();
    const { target, scope } = await fresh(st, url);
    const r = new Recorder();
    const load = startLoad(r, target, RPS, { read: 0.7, import: 0, upload: 0.3, screenshot: 0 });
    const before = hits.get("/never") ?? 0;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        r.call("import", `${url}/api/v1/sites/${target.siteId}/media/import-url`, {
          method: "POST",
          headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
          body: JSON.stringify({ url: `${imgOrigin}/never?i=${i}` }),
        }),
      ),
    );
    const reached = (hits.get("/never") ?? 0) - before;
    await load.stop();
    const imports = r.recs.filter((x) => x.kind === "import");
    const n = (o: string) => imports.filter((x) => x.outcome === o).length;
    const checks = await dataChecks(scope);
    api.proc.signal("SIGTERM");
    await api.proc.exited(10_000);
    record(
      "fetch limit",
      r,
      null,
      null,
      checks,
      reached === 5 && n("429") === 15
        ? { ok: true, text: `5 of 20 reached the host (${n("504")}×504, ${n("429")}×429)` }
        : { ok: false, text: `${reached} of 20 reached the host (${n("504")}×504, ${n("429")}×429)` },
      [],
    );
  };

  /** 18.2: the disk stack's storage full (tmpfs filled), under imports, PUTs and a render; then freed. */
  const diskFull = async () => {
    const st = diskStack;
    if (!tmpfs) {
      record(
        "disk full",
        new Recorder(),
        null,
        null,
        {
          files: na(),
          quota: na(),
          ledger: na(),
          tmp: na(),
          chromium: na(),
        },
        {
          ok: null,
          text: "not played: no tmpfs (mount needs root); outages_test.ts covers it with a failing store",
        },
        [],
      );
      return;
    }
    await st.daemon.start();
    try {
      const { target, scope } = await fresh(st);
      target.uploadBytes = sampleImage("png", { width: 16, height: 16, size: 200_000 });
      const r = new Recorder();
      const load = startLoad(r, target, RPS, { read: 0.4, import: 0.3, upload: 0.3, screenshot: 0 });
      await Bun.sleep(2000);
      // Fill the tmpfs to the last byte.
      const filler = join(diskDir, "filler");
      execSync(`dd if=/dev/zero of=${filler} bs=1M 2>/dev/null || true`);
      execSync(`dd if=/dev/zero of=${filler}-tail bs=4k 2>/dev/null || true`);
      const fullAt = performance.now();
      // A render whose frame cannot be stored.
      const shot = await r.call(
        "screenshot",
        `${target.api}/api/v1/sites/${target.siteId}/media/screenshot`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${target.key}`, "content-type": "application/json" },
          body: JSON.stringify({ url: `${pageOrigin}/page?full=1`, viewportWidth: 800, viewportHeight: 500 }),
        },
      );
      const renderId = shot?.res.status === 202 ? (shot.json.renderId as string) : null;
      const rendered = renderId
        ? await until(
            "render settled",
            async () => {
              const [x] = await scope.sql<{ status: string; error: string | null }[]>`
              select status, error from screenshot_renders where id = ${renderId}`;
              return x && x.status !== "pending" ? x : null;
            },
            90_000,
          ).catch(() => null)
        : null;
      await Bun.sleep(Math.max(0, 6000 - (performance.now() - fullAt)));
      const ready = await r.call("readyz", `${target.api}/readyz`);
      rmSync(filler, { force: true });
      rmSync(`${filler}-tail`, { force: true });
      const since = performance.now();
      const recovery = await firstSuccess(r, since, "import", () => play(r, target, "import"));
      await Bun.sleep(3000);
      await load.stop();
      const checks = await dataChecks(scope);
      const whileFull = r.recs.filter(
        (x) => x.t0 >= fullAt && x.t1 <= since && ["import", "put"].includes(x.kind),
      );
      const refused = whileFull.filter((x) => ["503", "507"].includes(x.outcome)).length;
      const sentence =
        rendered?.status === "failed" &&
        !!rendered.error &&
        !/E[A-Z]{3,}|errno|\/[a-z]|\bat\s+\S+\s\(/.test(rendered.error);
      const readyNamesStorage = ready?.res.status === 503 && /storage/.test(ready.text);
      const problems: string[] = [];
      if (!refused) problems.push("no import or PUT was refused 503/507 while full");
      if (!sentence)
        problems.push(`render ${rendered?.status ?? "never settled"}: ${rendered?.error ?? "-"}`);
      if (!readyNamesStorage) problems.push(`/readyz ${ready?.res.status}`);
      record(
        "disk full",
        r,
        recovery,
        RECOVERY_MS,
        checks,
        problems.length
          ? { ok: false, text: problems.join("; ") }
          : { ok: true, text: `${refused} refused 503/507; /readyz 503 storage; render error a sentence` },
        [`tmpfs 48 MiB filled; render error: "${rendered?.error ?? "-"}"`],
        judge(r),
      );
    } finally {
      st.daemon.proc.signal("SIGTERM");
      await st.daemon.proc.exited(40_000);
      await st.daemon.proc.kill();
    }
  };

  const names = Object.keys(scenarios);
  if (ONLY && !names.includes(ONLY))
    throw new Error(`--only: one of ${names.map((n) => `"${n}"`).join(", ")}`);
  for (const name of ONLY ? [ONLY] : names) {
    say(`scenario: ${name}`);
    try {
      await scenarios[name]!();
    } catch (err) {
      rows.push({
        scenario: name,
        requests: 0,
        statuses: {},
        longestMs: 0,
        recoveryMs: null,
        checks: {
          files: na(),
          quota: na(),
          ledger: na(),
          tmp: na(),
          chromium: na(),
          scenario: { ok: false, text: String(err).slice(0, 200) },
        },
        problems: [String(err).slice(0, 300)],
        pass: false,
        notes: [],
      });
      say(`${name}: FAIL (${String(err).slice(0, 300)})`);
      // Whatever the scenario broke, bring the backends back for the next one.
      if (!pg.proc.running) await pg.start();
      if (!redis.proc.running) await redis.start();
      if (!s3.proc.running) await s3.start();
      if (!s3Stack.api.proc.running) await s3Stack.api.start();
      if (!s3Stack.daemon.proc.running) await s3Stack.daemon.start();
      if (!diskStack.api.proc.running) await diskStack.api.start();
    }
  }
}

// ---- the table -------------------------------------------------------------------------------------

function printTable() {
  const mark = (c: Check) => (c.ok === null ? c.text : `${c.ok ? "pass" : "FAIL"} ${c.text}`);
  const head = [
    "scenario",
    "requests",
    "statuses seen",
    "longest ms",
    "recovery ms",
    "listed=rows=stored",
    "quota=stored",
    "ledger",
    "tmp swept",
    "chromium orphans",
    "scenario check",
    "result",
  ];
  const body = rows.map((r) => [
    r.scenario,
    String(r.requests),
    Object.entries(r.statuses)
      .sort()
      .map(([s, n]) => `${s}:${n}`)
      .join(" "),
    r.longestMs.toFixed(0),
    r.recoveryMs === null ? "-" : r.recoveryMs.toFixed(0),
    mark(r.checks.files),
    mark(r.checks.quota),
    mark(r.checks.ledger),
    mark(r.checks.tmp),
    mark(r.checks.chromium),
    mark(r.checks.scenario),
    r.pass ? "pass" : "FAIL",
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  console.log("");
  console.log(line(head));
  console.log(line(head.map(() => "---")));
  for (const b of body) console.log(line(b));
  console.log("");
  for (const r of rows) {
    for (const n of r.notes) console.log(`- ${r.scenario}: ${n}`);
    for (const p of r.problems) console.log(`- ${r.scenario}: FAIL ${p}`);
  }
  console.log(
    `bounds: answers <= ${BOUND_MS} ms, recovery <= ${RECOVERY_MS} ms (renders ${RENDER_RECOVERY_MS} ms); load ${RPS} req/s; run took ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
}
