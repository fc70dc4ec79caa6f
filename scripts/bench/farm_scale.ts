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
 * Its steps (services, seeding, processes, load, watching, checks, figures, report) live in scripts/bench/farm/.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { type Child, stopChildren } from "./farm/child.ts";
import { computeFigures } from "./farm/figures.ts";
import { checkInvariants, readRenders } from "./farm/invariants.ts";
import { submitRenders, waitForRenders } from "./farm/load.ts";
import { createSites, farmEnv, startApi, startWorkers } from "./farm/processes.ts";
import { formatResult } from "./farm/report.ts";
import { seedOrganizations } from "./farm/seed.ts";
import { startServices } from "./farm/services.ts";
import type { FarmOptions, FarmResult } from "./farm/types.ts";
import { farmCounters, measureIdle, watchConnections } from "./farm/watch.ts";

export type { FarmOptions, FarmResult } from "./farm/types.ts";

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

/** Runs one farm: sets it up, queues every render, waits for them, checks them, and tears it all down. */
export async function runFarmScale(opts: FarmOptions): Promise<FarmResult> {
  const say = opts.say ?? (() => {});
  const tag = `farm_${Date.now().toString(36)}_${process.pid}`;
  const admin = postgres(opts.serverUrl, { max: 1, onnotice: () => {} });
  const dir = mkdtempSync(join(tmpdir(), "farm-scale-"));
  const runsFile = join(dir, "runs.log");
  writeFileSync(runsFile, "");
  const failures: string[] = [];
  const children: Child[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  const t00 = performance.now();
  try {
    const svc = await startServices(opts, tag, admin, cleanups);
    const { orgs, grant } = await seedOrganizations(opts, svc.seedDb, dir);
    await svc.seedDb.close();

    const base = farmEnv(tag, dir, svc.pooled, svc.redisUrl);
    const { api, call } = await startApi(base, svc.direct, children);
    await createSites(call, orgs);
    const { workers, startMs } = await startWorkers(opts, base, runsFile, children);
    say(`  ${opts.workers} workers ready in ${(startMs / 1000).toFixed(1)} s`);

    const watcher = watchConnections(tag, svc.watch, svc.poolerAdmin);
    const snapshot = farmCounters(tag, svc.poolerAdmin, svc.redisClient, api, workers);
    const load0 = loadavg()[0]!;
    const idle = await measureIdle(snapshot, opts.workers);

    const run0 = await snapshot();
    const { submitted, admissionMs } = await submitRenders(opts, tag, orgs, call, failures);
    say(`  ${submitted.length} renders queued`);
    await waitForRenders(opts, svc.watch, workers, failures);
    const run1 = await snapshot();
    const load1 = loadavg()[0]!;
    await watcher.stop();

    const rows = await readRenders(svc.watch);
    const { conns } = watcher;
    await checkInvariants(
      { opts, watch: svc.watch, runsFile, orgs, grant, submitted, conns, children },
      rows,
      failures,
    );
    return computeFigures(
      {
        opts,
        dir,
        rows,
        submitted,
        admissionMs,
        startMs,
        conns,
        ...idle,
        run0,
        run1,
        loadAvg: [load0, load1],
      },
      failures,
    );
  } finally {
    await stopChildren(children);
    for (const close of cleanups.reverse()) await close().catch(() => {});
    await admin.end({ timeout: 1 });
    rmSync(dir, { recursive: true, force: true });
    say(`  farm of ${opts.workers} torn down (${((performance.now() - t00) / 1000).toFixed(0)} s in all)`);
  }
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
