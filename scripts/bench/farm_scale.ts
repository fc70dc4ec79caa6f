/**
 * Bench: the render farm at scale (issue 35). Starts, as processes of their own, the API and N render
 * daemons (scripts/bench/_farm_worker.ts: the real daemon, queue, admission, claim and completion, with
 * the stub pipeline in place of Chromium, decision 1503) behind a real PgBouncer in transaction mode
 * (stock settings, its own 127.0.0.1 port) on a database of the bench's own, and a Redis server of its
 * own (so INFO commandstats counts this farm alone). PostgreSQL's server is shared and cannot be
 * restarted here, so `max_connections` is emulated by the bench role's CONNECTION LIMIT (default 40): a
 * process that wanted more than that would get "too many connections for role" errors.
 * 50 organizations each queue the same number of screenshots through the API; the bench reports dispatch
 * throughput, admission latency (the POST, which charges, writes and admits) p50/p99, server connections
 * used (pg_stat_activity for the role; PgBouncer's SHOW POOLS), fairness across organizations, and the
 * farm's database and Redis work per render. It exits non-zero when a render is charged twice, lost,
 * run twice (filmed more than once) or stored twice, or when the pooler used more server connections
 * than its pool.
 *   bun scripts/bench/farm_scale.ts --workers 30            (50 organizations × 6 renders)
 *   bun scripts/bench/farm_scale.ts --workers 1,10,30       (the curve, one farm after another)
 * Options: --orgs 50 --renders-per-org 6 --pool 20 --conn-limit 40 --film-ms 200 --submit-concurrency 8
 * --timeout-s 600. TEST_DATABASE_URL (a superuser URL; default postgres://postgres@127.0.0.1:5432/postgres)
 * names the server. Needs pgbouncer and redis-server (scripts/lib/bootstrap.sh: ensure_pgbouncer).
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, systemClock } from "@site/config";
import { connectDatabase, migrateDatabase } from "@site/db";
import { freePort, startPgBouncer } from "@site/db/testing";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { startRedisServer } from "@site/render-daemon/testing";
import { type Subprocess, spawn } from "bun";
import postgres from "postgres";

export type FarmOptions = {
  workers: number;
  orgs: number;
  rendersPerOrg: number;
  /** PgBouncer's default_pool_size: the most server connections the farm's pool may open. */
  poolSize: number;
  /** The bench role's CONNECTION LIMIT (stands for the server's max_connections). */
  connLimit: number;
  filmMs: number;
  submitConcurrency: number;
  timeoutMs: number;
  /** A superuser URL of the PostgreSQL server. */
  serverUrl: string;
  /** Progress lines (default: none). */
  say?: (line: string) => void;
};

export type FarmResult = {
  options: Omit<FarmOptions, "say" | "serverUrl">;
  renders: number;
  startMs: number;
  wallS: number;
  throughputPerS: number;
  steadyThroughputPerS: number;
  admissionMs: { p50: number; p99: number; max: number };
  queueToDoneMs: { p50: number; p99: number };
  serverConnections: {
    roleMax: number;
    poolerServersMax: number;
    clientsWaitingMax: number;
    maxWaitS: number;
  };
  fairness: { jainAtHalf: number; orgMeanLatencyMinMs: number; orgMeanLatencyMaxMs: number };
  perRender: { xacts: number; queries: number; redisCalls: number; bytesStored: number };
  /** The same with the idle farm's own work over the run (its rate × the run's length) taken away. */
  perRenderNet: { xacts: number; queries: number; redisCalls: number; apiCpuMs: number; workerCpuMs: number };
  idlePerWorkerPerS: { xacts: number; queries: number; redisCalls: number; cpuMs: number };
  loadAvg: [number, number];
  redisTop: Record<string, number>;
  failures: string[];
};

export const DEFAULTS: Omit<FarmOptions, "workers"> = {
  orgs: 50,
  rendersPerOrg: 6,
  poolSize: 20,
  connLimit: 40,
  filmMs: 200,
  submitConcurrency: 8,
  timeoutMs: 600_000,
  serverUrl: process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
};

const CREDITS_PER_SHOT = 10;
const ROOT = join(import.meta.dir, "../..");

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A child process whose last output is kept (for the failure message) and whose lines are watched. */
type Child = {
  proc: Subprocess;
  name: string;
  tail(): string;
  seen(text: string): boolean;
  /** Its output lines that mention `text`. */
  linesWith(text: string): string[];
};

function startChild(name: string, cmd: string[], env: Record<string, string>): Child {
  const proc = spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    const reader = s.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += dec.decode(value);
      if (out.length > 8_000_000) out = out.slice(-4_000_000);
    }
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  return {
    proc,
    name,
    tail: () => out.slice(-3000),
    seen: (t) => out.includes(t),
    linesWith: (t) => out.split("\n").filter((l) => l.includes(t)),
  };
}

async function waitFor(what: string, ms: number, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

function redisCommandStats(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** CPU seconds a process has used (utime + stime), 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

/** Runs one farm: sets it up, queues every render, waits for them, checks them, and tears it all down. */
export async function runFarmScale(opts: FarmOptions): Promise<FarmResult> {
  const say = opts.say ?? (() => {});
  const tag = `farm_${Date.now().toString(36)}_${process.pid}`;
  const server = new URL(opts.serverUrl);
  const admin = postgres(opts.serverUrl, { max: 1, onnotice: () => {} });
  const dir = mkdtempSync(join(tmpdir(), "farm-scale-"));
  const runsFile = join(dir, "runs.log");
  writeFileSync(runsFile, "");
  const failures: string[] = [];
  const children: Child[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  const t00 = performance.now();
  try {
    // The role stands for the farm's database user; its CONNECTION LIMIT for the server's max_connections.
    await admin.unsafe(`create role ${tag} login nosuperuser connection limit ${opts.connLimit}`);
    cleanups.push(() => admin.unsafe(`drop role if exists ${tag}`));
    await admin.unsafe(`create database ${tag} owner ${tag}`);
    cleanups.push(() => admin.unsafe(`drop database if exists ${tag} with (force)`));
    const directUrl = new URL(opts.serverUrl);
    directUrl.username = tag;
    directUrl.password = "";
    directUrl.pathname = `/${tag}`;
    const direct = directUrl.toString();
    const watchUrl = new URL(opts.serverUrl);
    watchUrl.pathname = `/${tag}`;
    // The bench's own reads (superuser, direct): outside the role's limit, not counted as the farm's.
    const watch = postgres(watchUrl.toString(), { max: 2, onnotice: () => {} });
    cleanups.unshift(() => watch.end({ timeout: 1 }));
    const seedDb = connectDatabase(direct, { max: 2 });
    await migrateDatabase(seedDb);

    const pgb = await startPgBouncer(direct, { poolSize: opts.poolSize });
    cleanups.unshift(() => pgb.stop());
    const pooled = pgb.via(direct);
    const poolerAdmin = postgres(pgb.via(direct).replace(/\/[^/?]*(\?|$)/, "/pgbouncer$1"), {
      max: 1,
      prepare: false,
      fetch_types: false,
      onnotice: () => {},
    });
    cleanups.unshift(() => poolerAdmin.end({ timeout: 1 }));
    const redis = await startRedisServer();
    cleanups.unshift(() => redis.stop());
    const redisClient = new Bun.RedisClient(redis.url);
    cleanups.unshift(async () => redisClient.close());

    // 50 organizations, each with a member and a key; credits for its renders and 5 over (a double
    // charge shows in the balance as well as in the ledger).
    const grant = opts.rendersPerOrg * CREDITS_PER_SHOT + 5;
    const ctx: Context = {
      config: loadConfig({ SECRET_KEY: "farm-bench-secret-0123456789", DATA_DIR: dir }),
      db: seedDb.db,
      clock: systemClock,
      log: createLogger("silent" as never),
    };
    const orgs: { id: string; key: string; siteId: string }[] = [];
    for (let i = 0; i < opts.orgs; i++) {
      const org = await createOrganization(ctx, { name: `Farm ${i}`, credits: grant });
      const user = await createMember(ctx, { orgId: org.id, email: `farm${i}@example.test`, role: "owner" });
      const key = await createApiKey(ctx, {
        orgId: org.id,
        userId: user.id,
        scopes: ["content:read", "content:write", "sites:write"],
      });
      orgs.push({ id: org.id, key: key.key, siteId: "" });
    }
    await seedDb.close();

    const base: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      NODE_ENV: "test",
      DATABASE_URL: pooled,
      DATABASE_POOLER: "transaction",
      REDIS_URL: redis.url,
      QUEUE_PREFIX: tag,
      DATA_DIR: join(dir, "data"),
      SECRET_KEY: "farm-bench-secret-0123456789",
      LOG_LEVEL: "warn",
      FETCH_ALLOW_HOSTS: "127.0.0.1:9",
      RENDER_CONCURRENCY: "2",
      ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
    };
    const port = freePort();
    // The API listens on the direct URL (its key cache and render waits: two connections); daemons poll.
    const api = startChild("api", [process.execPath, "apps/api/src/main.ts"], {
      ...base,
      DATABASE_LISTEN_URL: direct,
      PORT: String(port),
      HOST: "127.0.0.1",
    });
    children.push(api);
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitFor("the API", 120_000, () => {
      if (api.proc.exitCode !== null) throw new Error(`the API exited:\n${api.tail()}`);
      return api.seen(apiUrl);
    });
    const call = async (method: string, path: string, key: string, body?: unknown) =>
      fetch(`${apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    for (const [i, o] of orgs.entries()) {
      const res = await call("POST", "/api/v1/sites", o.key, { name: `Farm ${i}`, slug: `farm-${i}` });
      if (res.status !== 201) throw new Error(`site create answered ${res.status}: ${await res.text()}`);
      o.siteId = ((await res.json()) as { site: { id: string } }).site.id;
    }

    // The workers, all started at once (as an autoscaler adds hosts).
    const tStart = performance.now();
    for (let i = 0; i < opts.workers; i++)
      children.push(
        startChild(`worker ${i + 1}`, [process.execPath, "scripts/bench/_farm_worker.ts"], {
          ...base,
          FARM_RUNS_FILE: runsFile,
          FARM_FILM_MS: String(opts.filmMs),
        }),
      );
    const workers = children.slice(1);
    await waitFor("every worker ready", 300_000, () => {
      for (const w of workers)
        if (w.proc.exitCode !== null) throw new Error(`${w.name} exited at start:\n${w.tail()}`);
      return workers.every((w) => w.seen("farm worker ready"));
    });
    const startMs = Math.round(performance.now() - tStart);
    say(`  ${opts.workers} workers ready in ${(startMs / 1000).toFixed(1)} s`);

    // Connections watched throughout (every 200 ms).
    const conns = { roleMax: 0, poolerServersMax: 0, clientsWaitingMax: 0, maxWaitS: 0 };
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const [{ n }] =
          (await watch`select count(*)::int as n from pg_stat_activity where usename = ${tag}`) as [
            { n: number },
          ];
        conns.roleMax = Math.max(conns.roleMax, n);
        const pools = (await poolerAdmin.unsafe("show pools").simple()) as Record<string, unknown>[];
        for (const p of pools.filter((r) => r.database === tag)) {
          const sv = ["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"].reduce(
            (s, k) => s + Number(p[k] ?? 0),
            0,
          );
          conns.poolerServersMax = Math.max(conns.poolerServersMax, sv);
          conns.clientsWaitingMax = Math.max(conns.clientsWaitingMax, Number(p.cl_waiting ?? 0));
          conns.maxWaitS = Math.max(conns.maxWaitS, Number(p.maxwait ?? 0));
        }
        await Bun.sleep(200);
      }
    })();

    const poolerStats = async () => {
      const rows = (await poolerAdmin.unsafe("show stats").simple()) as Record<string, unknown>[];
      const row = rows.find((r) => r.database === tag);
      return { xacts: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
    };
    const redisCalls = async () =>
      redisCommandStats(String(await redisClient.send("INFO", ["commandstats"])));
    const sumCalls = (a: Record<string, number>, b: Record<string, number>) =>
      Object.entries(b).reduce((s, [k, v]) => (k === "info" ? s : s + v - (a[k] ?? 0)), 0);

    // The idle farm's own work (sweepers, polls, queue waits), over 3 s.
    const cpu = () => ({
      api: cpuSeconds(api.proc.pid),
      workers: workers.reduce((s, w) => s + cpuSeconds(w.proc.pid), 0),
    });
    const load0 = loadavg()[0]!;
    const idle0 = { db: await poolerStats(), redis: await redisCalls(), cpu: cpu(), t: performance.now() };
    await Bun.sleep(3000);
    const idle1 = { db: await poolerStats(), redis: await redisCalls(), cpu: cpu(), t: performance.now() };
    const idleS = (idle1.t - idle0.t) / 1000;
    const idlePerWorkerPerS = {
      xacts: (idle1.db.xacts - idle0.db.xacts) / idleS / opts.workers,
      queries: (idle1.db.queries - idle0.db.queries) / idleS / opts.workers,
      redisCalls: sumCalls(idle0.redis, idle1.redis) / idleS / opts.workers,
      cpuMs: ((idle1.cpu.workers - idle0.cpu.workers) * 1000) / idleS / opts.workers,
    };
    const idleApiCpuMsPerS = ((idle1.cpu.api - idle0.cpu.api) * 1000) / idleS;

    // Every organization queues its renders, interleaved, a few requests at a time.
    const tasks: { org: number; n: number }[] = [];
    for (let n = 0; n < opts.rendersPerOrg; n++)
      for (let org = 0; org < opts.orgs; org++) tasks.push({ org, n });
    const submitted: { id: string; org: number; url: string }[] = [];
    const admissionMs: number[] = [];
    const run0 = { db: await poolerStats(), redis: await redisCalls(), cpu: cpu(), t: performance.now() };
    let next = 0;
    await Promise.all(
      Array.from({ length: opts.submitConcurrency }, async () => {
        while (next < tasks.length) {
          const t = tasks[next++]!;
          const o = orgs[t.org]!;
          const url = `http://127.0.0.1:9/org${t.org}/shot${t.n}?${tag}`;
          const t0 = performance.now();
          const res = await call("POST", `/api/v1/sites/${o.siteId}/media/screenshot`, o.key, { url });
          admissionMs.push(performance.now() - t0);
          if (res.status !== 202) {
            failures.push(`a screenshot POST answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
            continue;
          }
          submitted.push({ id: ((await res.json()) as { renderId: string }).renderId, org: t.org, url });
        }
      }),
    );
    say(`  ${submitted.length} renders queued`);
    await waitFor("every render to end", opts.timeoutMs, async () => {
      const [{ n }] =
        (await watch`select count(*)::int as n from screenshot_renders where status = 'pending'`) as [
          { n: number },
        ];
      for (const w of workers)
        if (w.proc.exitCode !== null) throw new Error(`${w.name} exited:\n${w.tail()}`);
      return n === 0;
    }).catch((err) => failures.push(String(err)));
    const run1 = { db: await poolerStats(), redis: await redisCalls(), cpu: cpu(), t: performance.now() };
    const load1 = loadavg()[0]!;
    watching = false;
    await watcher;

    // Correctness: every render done once, charged once, stored once.
    const rows = (await watch`
      select id, org_id, status, image_key, extract(epoch from created_at) * 1000 as created,
             extract(epoch from finished_at) * 1000 as finished
      from screenshot_renders`) as {
      id: string;
      org_id: string;
      status: string;
      image_key: string | null;
      created: string;
      finished: string | null;
    }[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const notDone = submitted.filter((s) => byId.get(s.id)?.status !== "done");
    if (notDone.length > 0)
      failures.push(
        `${notDone.length} renders lost or not done: ${notDone
          .slice(0, 5)
          .map((s) => `${s.id} (${byId.get(s.id)?.status ?? "missing"})`)
          .join(", ")}`,
      );
    if (rows.length !== submitted.length)
      failures.push(`${rows.length} render rows for ${submitted.length} renders queued`);
    const films = new Map<string, number>();
    for (const line of readFileSync(runsFile, "utf8").split("\n")) {
      const url = line.split(" ")[1];
      if (url) films.set(url, (films.get(url) ?? 0) + 1);
    }
    const twice = submitted.filter((s) => (films.get(s.url) ?? 0) > 1);
    if (twice.length > 0)
      failures.push(
        `${twice.length} renders run twice: ${twice
          .slice(0, 5)
          .map((s) => s.url)
          .join(", ")}`,
      );
    const never = submitted.filter((s) => byId.get(s.id)?.status === "done" && !films.get(s.url));
    if (never.length > 0) failures.push(`${never.length} renders done without being filmed`);
    const ledger = (await watch`
      select subject_id, reason, count(*)::int as n, sum(delta)::int as delta
      from credit_ledger where reason <> 'grant' group by subject_id, reason`) as {
      subject_id: string;
      reason: string;
      n: number;
      delta: number;
    }[];
    const debits = new Map<string, number>();
    for (const l of ledger) {
      if (l.reason === "screenshot_debit")
        debits.set(l.subject_id, (debits.get(l.subject_id) ?? 0) + l.delta);
      else if (l.reason === "screenshot_refund" && byId.get(l.subject_id)?.status === "done")
        failures.push(`render ${l.subject_id} is done and was refunded`);
    }
    const charged = submitted.filter((s) => debits.get(s.id) !== -CREDITS_PER_SHOT);
    if (charged.length > 0)
      failures.push(
        `${charged.length} renders not charged exactly once: ${charged
          .slice(0, 5)
          .map((s) => `${s.id} (${debits.get(s.id) ?? 0})`)
          .join(", ")}`,
      );
    const balances = (await watch`select id, credits from organizations`) as {
      id: string;
      credits: number;
    }[];
    for (const b of balances) {
      const i = orgs.findIndex((o) => o.id === b.id);
      const done = submitted.filter((s) => s.org === i && byId.get(s.id)?.status === "done").length;
      if (b.credits !== grant - CREDITS_PER_SHOT * done)
        failures.push(`organization ${i} holds ${b.credits} credits, not ${grant - CREDITS_PER_SHOT * done}`);
    }
    const files = (await watch`
      select key from media_files where source = 'screenshot'`) as { key: string }[];
    const keys = new Set(rows.map((r) => r.image_key));
    if (files.length !== submitted.length || files.some((f) => !keys.has(f.key)))
      failures.push(`${files.length} screenshot library files for ${submitted.length} renders`);
    if (conns.poolerServersMax > opts.poolSize)
      failures.push(
        `the pooler opened ${conns.poolerServersMax} server connections, over its pool of ${opts.poolSize}`,
      );
    for (const c of children)
      if (/too many connections|remaining connection slots/.test(c.tail()))
        failures.push(`${c.name} was refused a connection: ${c.tail().slice(-400)}`);

    // Figures.
    const created = rows.map((r) => Number(r.created));
    const finished = rows.filter((r) => r.finished).map((r) => Number(r.finished));
    finished.sort((a, b) => a - b);
    const first = Math.min(...created);
    const wallS = (Math.max(...finished) - first) / 1000;
    const lo = finished[Math.floor(finished.length * 0.1)]!;
    const hi = finished[Math.floor(finished.length * 0.9)]!;
    const steady =
      (Math.floor(finished.length * 0.9) - Math.floor(finished.length * 0.1)) / ((hi - lo) / 1000);
    const lat = rows
      .filter((r) => r.finished)
      .map((r) => Number(r.finished) - Number(r.created))
      .sort((a, b) => a - b);
    const half = finished[Math.floor(finished.length / 2)]!;
    const orgOf = new Map(submitted.map((s) => [s.id, s.org]));
    const atHalf = new Array(opts.orgs).fill(0);
    const latSum = new Array(opts.orgs).fill(0);
    for (const r of rows) {
      const org = orgOf.get(r.id);
      if (org === undefined || !r.finished) continue;
      if (Number(r.finished) <= half) atHalf[org]++;
      latSum[org] += Number(r.finished) - Number(r.created);
    }
    const jain = atHalf.reduce((a, b) => a + b, 0) ** 2 / (opts.orgs * atHalf.reduce((a, b) => a + b * b, 0));
    const orgMeans = latSum.map((s) => s / opts.rendersPerOrg);
    admissionMs.sort((a, b) => a - b);
    const n = Math.max(1, submitted.length);
    const runS = (run1.t - run0.t) / 1000;
    // worker-seconds of the idle farm's own work within the run
    const idleWork = runS * opts.workers;
    const redisDelta: Record<string, number> = {};
    for (const [k, v] of Object.entries(run1.redis))
      if (k !== "info" && v - (run0.redis[k] ?? 0) > 0) redisDelta[k] = v - (run0.redis[k] ?? 0);
    const redisTop = Object.fromEntries(
      Object.entries(redisDelta)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([k, v]) => [k, Math.round((v / n) * 10) / 10]),
    );
    const { say: _s, serverUrl: _u, ...shown } = opts;
    void server;
    return {
      options: shown,
      renders: submitted.length,
      startMs,
      wallS,
      throughputPerS: submitted.length / wallS,
      steadyThroughputPerS: steady,
      admissionMs: { p50: pct(admissionMs, 50), p99: pct(admissionMs, 99), max: admissionMs.at(-1) ?? 0 },
      queueToDoneMs: { p50: pct(lat, 50), p99: pct(lat, 99) },
      serverConnections: conns,
      fairness: {
        jainAtHalf: jain,
        orgMeanLatencyMinMs: Math.min(...orgMeans),
        orgMeanLatencyMaxMs: Math.max(...orgMeans),
      },
      perRender: {
        xacts: (run1.db.xacts - run0.db.xacts) / n,
        queries: (run1.db.queries - run0.db.queries) / n,
        redisCalls: sumCalls(run0.redis, run1.redis) / n,
        bytesStored: dirBytes(join(dir, "data", "objects")) / n,
      },
      perRenderNet: {
        xacts: (run1.db.xacts - run0.db.xacts - idleWork * idlePerWorkerPerS.xacts) / n,
        queries: (run1.db.queries - run0.db.queries - idleWork * idlePerWorkerPerS.queries) / n,
        redisCalls: (sumCalls(run0.redis, run1.redis) - idleWork * idlePerWorkerPerS.redisCalls) / n,
        apiCpuMs: ((run1.cpu.api - run0.cpu.api) * 1000 - idleApiCpuMsPerS * runS) / n,
        workerCpuMs: ((run1.cpu.workers - run0.cpu.workers) * 1000 - idleWork * idlePerWorkerPerS.cpuMs) / n,
      },
      idlePerWorkerPerS,
      loadAvg: [load0, load1],
      redisTop,
      failures,
    };
  } finally {
    for (const c of children) c.proc.kill("SIGTERM");
    await Promise.race([Promise.all(children.map((c) => c.proc.exited)), Bun.sleep(30_000)]);
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
    for (const close of cleanups.reverse()) await close().catch(() => {});
    await admin.end({ timeout: 1 });
    rmSync(dir, { recursive: true, force: true });
    say(`  farm of ${opts.workers} torn down (${((performance.now() - t00) / 1000).toFixed(0)} s in all)`);
  }
}

function formatResult(r: FarmResult): string {
  const f = (x: number, d = 1) => x.toFixed(d);
  return [
    `workers ${r.options.workers}: ${r.renders} renders of ${r.options.orgs} orgs in ${f(r.wallS)} s`,
    `  dispatch ${f(r.throughputPerS)} renders/s (steady 10–90 %: ${f(r.steadyThroughputPerS)}/s); start ${f(r.startMs / 1000)} s`,
    `  admission (POST) p50 ${f(r.admissionMs.p50, 0)} ms, p99 ${f(r.admissionMs.p99, 0)} ms, max ${f(r.admissionMs.max, 0)} ms; queued→done p50 ${f(r.queueToDoneMs.p50 / 1000)} s, p99 ${f(r.queueToDoneMs.p99 / 1000)} s`,
    `  server connections: role max ${r.serverConnections.roleMax} (limit ${r.options.connLimit}), pooler servers max ${r.serverConnections.poolerServersMax} (pool ${r.options.poolSize}), clients waiting max ${r.serverConnections.clientsWaitingMax}, maxwait ${r.serverConnections.maxWaitS} s`,
    `  fairness: Jain index at half-time ${f(r.fairness.jainAtHalf, 3)}; per-org mean queued→done ${f(r.fairness.orgMeanLatencyMinMs / 1000)}–${f(r.fairness.orgMeanLatencyMaxMs / 1000)} s`,
    `  per render (run, farm-wide): ${f(r.perRender.xacts)} transactions, ${f(r.perRender.queries)} queries, ${f(r.perRender.redisCalls)} Redis calls, ${f(r.perRender.bytesStored / 1024, 0)} KiB stored`,
    `  per render, net of the idle farm: ${f(r.perRenderNet.xacts)} transactions, ${f(r.perRenderNet.queries)} queries, ${f(r.perRenderNet.redisCalls)} Redis calls; CPU ${f(r.perRenderNet.apiCpuMs)} ms API + ${f(r.perRenderNet.workerCpuMs)} ms daemon`,
    `  idle per worker per s: ${f(r.idlePerWorkerPerS.xacts, 2)} transactions, ${f(r.idlePerWorkerPerS.queries, 2)} queries, ${f(r.idlePerWorkerPerS.redisCalls, 2)} Redis calls, ${f(r.idlePerWorkerPerS.cpuMs)} ms CPU`,
    `  machine load (1 min) ${f(r.loadAvg[0])} at the start of the run, ${f(r.loadAvg[1])} at its end (${cpus().length} cores)`,
    `  Redis per render: ${JSON.stringify(r.redisTop)}`,
    r.failures.length
      ? `  FAILURES:\n    ${r.failures.join("\n    ")}`
      : "  checks: no double charge, none lost, none run or stored twice",
  ].join("\n");
}

function arg(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

if (import.meta.main) {
  const num = (name: string, d: number) => (arg(name) !== undefined ? Number(arg(name)) : d);
  const counts = (arg("workers") ?? "30").split(",").map(Number);
  let failed = false;
  for (const workers of counts) {
    const r = await runFarmScale({
      ...DEFAULTS,
      workers,
      orgs: num("orgs", DEFAULTS.orgs),
      rendersPerOrg: num("renders-per-org", DEFAULTS.rendersPerOrg),
      poolSize: num("pool", DEFAULTS.poolSize),
      connLimit: num("conn-limit", DEFAULTS.connLimit),
      filmMs: num("film-ms", DEFAULTS.filmMs),
      submitConcurrency: num("submit-concurrency", DEFAULTS.submitConcurrency),
      timeoutMs: num("timeout-s", DEFAULTS.timeoutMs / 1000) * 1000,
      say: (l) => console.log(l),
    });
    console.log(formatResult(r));
    if (process.env.FARM_JSON) console.log(JSON.stringify(r));
    if (r.failures.length) failed = true;
  }
  process.exit(failed ? 1 : 0);
}
