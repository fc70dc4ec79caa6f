/**
 * The chaos run's processes: its own PostgreSQL, Redis and S3-compatible server on free loopback ports,
 * and the apps (`bun run apps/api`, `bun run apps/render-daemon`), each in a process group of its own so
 * that a SIGKILL takes the whole group, as a crashed host or an OOM kill would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;

/** A free loopback port (the kernel's pick, released at once). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port as number;
  s.stop(true);
  return p;
}

/** Resolves once `fn` returns a truthy value; throws `what` at the deadline. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false> | T,
  ms: number,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(50);
  }
}

/** True once something accepts TCP connections on 127.0.0.1:`port`. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** A process of the run, in a group of its own, its output appended to `<logDir>/<name>.log`. */
export class Proc {
  child: ChildProcess | null = null;
  readonly log: string;
  constructor(
    readonly name: string,
    readonly argv: string[],
    readonly opts: { env?: Record<string, string>; cwd?: string; logDir: string },
  ) {
    this.log = join(opts.logDir, `${name}.log`);
  }
  /** Starts it (again). */
  start(extraEnv: Record<string, string> = {}): this {
    const fd = openSync(this.log, "a");
    this.child = spawn(this.argv[0]!, this.argv.slice(1), {
      cwd: this.opts.cwd ?? ROOT,
      detached: true,
      stdio: ["ignore", fd, fd],
      env: { ...process.env, ...this.opts.env, ...extraEnv } as NodeJS.ProcessEnv,
    });
    closeSync(fd);
    return this;
  }
  get pid(): number {
    return this.child?.pid ?? 0;
  }
  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }
  output(): string {
    try {
      return readFileSync(this.log, "utf8");
    } catch {
      return "";
    }
  }
  /** Sends `signal` to the process alone. */
  signal(signal: NodeJS.Signals): void {
    if (this.running) process.kill(this.pid, signal);
  }
  /** SIGKILLs its whole process group and waits for the process to be gone. */
  async kill(): Promise<void> {
    if (!this.child) return;
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {}
    await this.exited(10_000);
  }
  /** Waits until the process exited (or `ms` passed); its exit code, or the signal's name. */
  async exited(ms: number): Promise<string | number | null> {
    const c = this.child;
    if (!c) return null;
    if (c.exitCode === null && c.signalCode === null)
      await Promise.race([new Promise((r) => c.once("exit", r)), Bun.sleep(ms)]);
    return c.exitCode ?? c.signalCode;
  }
}

/** Runs a command to its end; throws with its output when it fails. */
function run(argv: string[], env: Record<string, string> = {}): void {
  const out = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  if (out.exitCode !== 0)
    throw new Error(`${argv.join(" ")} failed: ${out.stderr.toString()}${out.stdout.toString()}`);
}

/** The machine's PostgreSQL server binaries (Debian's layout), newest first. */
function postgresBin(): string {
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length)
    throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (install postgresql)");
  return join(base, versions[0]!, "bin");
}

/**
 * A throwaway PostgreSQL cluster on a free loopback port. initdb refuses to run as root: as root the
 * cluster belongs to the `postgres` account and its binaries run through `setpriv` (which execs, so the
 * server is the process this run started and its group holds every backend).
 */
export function createPostgres(dir: string, logDir: string) {
  const bin = postgresBin();
  const port = freePort();
  const data = join(dir, "pgdata");
  mkdirSync(data, { recursive: true, mode: 0o700 });
  const root = process.getuid?.() === 0;
  let asUser: string[] = [];
  if (root) {
    const pw = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((l) => l.split(":"))
      .find((f) => f[0] === "postgres");
    if (!pw) throw new Error("running as root needs a `postgres` account to own the throwaway cluster");
    chownSync(dir, Number(pw[2]), Number(pw[3]));
    chownSync(data, Number(pw[2]), Number(pw[3]));
    asUser = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"];
  }
  run([...asUser, join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync"], {
    LC_ALL: "C",
  });
  // fsync off: the run kills processes, not the machine, so the page cache keeps every committed write.
  const proc = new Proc(
    "postgres",
    [
      ...asUser,
      join(bin, "postgres"),
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=200",
    ],
    { logDir },
  );
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    proc,
    /** Starts (or restarts, after a crash: PostgreSQL recovers from its WAL) and waits for connections. */
    async start() {
      proc.start();
      await until(
        "postgres accepting connections",
        () => {
          const r = Bun.spawnSync([join(bin, "pg_isready"), "-h", "127.0.0.1", "-p", String(port)]);
          return r.exitCode === 0;
        },
        30_000,
      );
    },
  };
}

/** A Redis of the run's own: no snapshots, no append-only file (a restart comes back empty). */
export function createRedis(logDir: string) {
  const port = freePort();
  const proc = new Proc(
    "redis",
    ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { logDir },
  );
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    proc,
    async start() {
      proc.start();
      await until("redis listening", () => listening(port), 15_000);
    },
  };
}

/** s3rver in a process of its own (scripts/chaos/s3_server.ts), its files in `dir` across restarts. */
export function createS3(dir: string, logDir: string, bucket: string) {
  const port = freePort();
  const proc = new Proc("s3rver", ["bun", "scripts/chaos/s3_server.ts", String(port), dir, bucket], {
    logDir,
  });
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    proc,
    async start() {
      proc.start();
      await until("s3rver listening", () => listening(port), 20_000);
    },
  };
}

/** An app of the project run as an operator runs it (`bun run apps/<name>`), on a fixed port. */
export function createApp(
  name: string,
  app: "apps/api" | "apps/render-daemon",
  env: Record<string, string>,
  logDir: string,
  /** Resolves once the process serves; `since`: where its output of this start begins in the log. */
  ready: (p: Proc, since: number) => Promise<unknown>,
) {
  const proc = new Proc(name, ["bun", "run", app], { env, logDir });
  return {
    proc,
    env,
    /** Starts (again) and resolves once it serves (API) or takes jobs (daemon); how long that took. */
    async start(): Promise<number> {
      const t0 = performance.now();
      const before = proc.output().length;
      proc.start();
      await ready(proc, before).catch((err) => {
        throw new Error(`${name} did not start: ${err}\n${proc.output().slice(before).slice(-3000)}`);
      });
      return performance.now() - t0;
    },
  };
}

/**
 * Chromium processes left by a dead daemon: browsers whose profile directory (`site-chromium-<pid>-…`,
 * with an owner file naming its daemon) lies under `tmpRoot` and whose owner process is gone.
 */
export function orphanChromium(tmpRoot: string): number {
  let n = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const flag = args.find((a) => a.startsWith(`--user-data-dir=${tmpRoot}/`));
    if (!flag) continue;
    const m = /site-chromium-(\d+)-/.exec(flag);
    if (!m) continue;
    const owner = Number(m[1]);
    let alive = true;
    try {
      process.kill(owner, 0);
    } catch {
      alive = false;
    }
    if (!alive) n++;
  }
  return n;
}

/** Pids of processes whose command line mentions `marker` (this run's folder: browsers of its daemons). */
export function pidsMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}
