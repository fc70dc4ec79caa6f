/**
 * The chaos run (issues 14 and 18), by hand: `bun scripts/chaos/run.ts [--only <scenario>] [--json <file>]
 * [--keep]`; `--list` names the scenarios, `--help` says this.
 *
 * Starts its own PostgreSQL (a throwaway cluster), Redis and S3-compatible server (s3rver) on free
 * loopback ports, an HTTPS image host and an HTTP page host on loopback, and runs the API and the render
 * daemon as separate processes (`bun run apps/api`, `bun run apps/render-daemon`) against them
 * (world.ts). Then plays each scenario (scenarios/, one file each) under a load of a few requests a
 * second (keyed reads, URL imports, signed uploads, screenshots) and prints one table (verdict.ts):
 * requests, statuses seen, the longest answer, the recovery time after the dependency came back (first
 * success), and the data checks. Everything it started is killed and its folders removed at the end, on
 * failure too (`--keep` keeps the folder with every process's log).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCENARIOS } from "./scenarios/mod.ts";
import { pidsMentioning } from "./services.ts";
import { failedRow, printTable, type Run } from "./verdict.ts";
import { startWorld, type World } from "./world.ts";

const USAGE = `bun scripts/chaos/run.ts [--only "<scenario>"] [--json <file>] [--keep] | --list | --help
  --only   play one scenario (the backends and apps start all the same)
  --json   write the rows to <file> as well
  --keep   keep the run's folder with every process's log
  --list   print the scenarios' names, one a line, and start nothing`;

const args = process.argv.slice(2);
const argOf = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ONLY = argOf("--only");
const JSON_OUT = argOf("--json");
const KEEP = args.includes("--keep");
const names = Object.keys(SCENARIOS);

if (args.includes("--help") || args.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
if (args.includes("--list")) {
  for (const n of names) console.log(n);
  process.exit(0);
}
if (ONLY !== undefined && !names.includes(ONLY)) {
  console.error(`--only: one of ${names.map((n) => `"${n}"`).join(", ")}`);
  process.exit(2);
}

// ---- everything this run starts, and its cleanup ---------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "site-chaos-"));
chmodSync(dir, 0o755);
const logDir = join(dir, "logs");
mkdirSync(logDir);
const t0 = performance.now();
const run: Run = {
  dir,
  logDir,
  procs: [],
  cleanups: [],
  rows: [],
  t0,
  say: (msg) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}`),
};
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  // Processes first (a lazy unmount then frees the tmpfs at once), then servers, clients and mounts.
  for (const p of run.procs.reverse()) await p.kill().catch(() => {});
  // Browsers of the daemons (their own process groups) end with their pipe; any still here are
  // SIGKILLed by pid (they name this run's folder) before the folder goes.
  for (let i = 0; i < 50 && pidsMentioning(dir).length; i++) {
    if (i === 20)
      for (const pid of pidsMentioning(dir))
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
    await Bun.sleep(100);
  }
  // Each bounded: a close that never settles must not end the process before the folder is removed
  // (the timer keeps the event loop alive).
  for (const c of run.cleanups.reverse()) {
    try {
      await Promise.race([Promise.resolve().then(c), Bun.sleep(3000)]);
    } catch {}
  }
  if (KEEP) console.log(`kept ${dir} (logs in ${logDir})`);
  else rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    void cleanup().then(() => process.exit(130));
  });

// ---- the run ---------------------------------------------------------------------------------------

try {
  const world = await startWorld(run);
  for (const name of ONLY ? [ONLY] : names) await play(world, name);
} catch (err) {
  console.error("chaos run failed:", err);
  process.exitCode = 1;
} finally {
  if (run.rows.length) printTable(run);
  if (JSON_OUT) {
    const tookS = (performance.now() - t0) / 1000;
    writeFileSync(JSON_OUT, JSON.stringify({ at: new Date().toISOString(), tookS, rows: run.rows }, null, 2));
    console.log(`results written to ${JSON_OUT}`);
  }
  await cleanup();
}
if (run.rows.some((r) => !r.pass)) process.exitCode = 1;

/** Plays one scenario; one that throws gets a failed row, and whatever it broke is brought back. */
async function play(w: World, name: string) {
  w.say(`scenario: ${name}`);
  try {
    await SCENARIOS[name]!(w);
  } catch (err) {
    w.rows.push(failedRow(name, err));
    w.say(`${name}: FAIL (${String(err).slice(0, 300)})`);
    if (!w.pg.proc.running) await w.pg.start();
    if (!w.redis.proc.running) await w.redis.start();
    if (!w.s3.proc.running) await w.s3.start();
    if (!w.s3Stack.api.proc.running) await w.s3Stack.api.start();
    if (!w.s3Stack.daemon.proc.running) await w.s3Stack.daemon.start();
    if (!w.diskStack.api.proc.running) await w.diskStack.api.start();
  }
}
