import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import postgres from "postgres";

/** The PgBouncer binary (PGBOUNCER_PATH, else Debian's), or null when none is installed. */
export function pgbouncerPath(): string | null {
  for (const p of [process.env.PGBOUNCER_PATH, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"])
    if (p && existsSync(p)) return p;
  return null;
}

/** Why the pooler tests cannot run here, or null when they can (for `test.skipIf`). */
export function pgbouncerMissing(): string | null {
  return pgbouncerPath()
    ? null
    : "no PgBouncer: scripts/test installs it through apt (needs root); set PGBOUNCER_PATH otherwise";
}

/** A PgBouncer of a test's own in transaction mode, in front of the test's PostgreSQL server. */
export type PgBouncer = {
  port: number;
  /** `url` with its host and port replaced by the pooler's. */
  via(url: string): string;
  /** What PgBouncer wrote (its log) so far. */
  log(): string;
  stop(): Promise<void>;
};

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts PgBouncer on a free 127.0.0.1 port in transaction mode, with its stock settings otherwise (in
 * particular no `ignore_startup_parameters`, as the issue asks): every database name is passed through
 * to `serverUrl`'s host and port. Resolves once it accepts a query.
 */
export async function startPgBouncer(
  serverUrl: string,
  opts: { poolSize?: number } = {},
): Promise<PgBouncer> {
  const bin = pgbouncerPath();
  if (!bin) throw new Error(pgbouncerMissing()!);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`);
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${opts.poolSize ?? 10}`,
      "max_client_conn = 500",
      `admin_users = ${user}`,
      "",
    ].join("\n"),
  );
  let out = "";
  // PgBouncer refuses to run as root; `-u` drops to the postgres user where we are root. A shell watches
  // this process and stops PgBouncer when it is gone, so a test process that dies leaves none behind.
  const asUser = process.getuid?.() === 0 ? "-u postgres " : "";
  const script = [
    `${bin} ${asUser}${join(dir, "pgbouncer.ini")} & pid=$!`,
    `trap 'kill $pid 2>/dev/null; wait $pid; exit 0' TERM INT`,
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $pid 2>/dev/null; do sleep 0.5 & wait $!; done`,
    "kill $pid 2>/dev/null; wait $pid",
  ].join("\n");
  const proc: Subprocess = spawn(["sh", "-c", script], { stdout: "pipe", stderr: "pipe" });
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    const reader = s.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += dec.decode(value);
    }
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  const via = (url: string) => {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = postgres(via(serverUrl), {
      max: 1,
      connect_timeout: 1,
      prepare: false,
      onnotice: () => {},
    });
    try {
      await probe`select 1`;
      await probe.end({ timeout: 0 });
      break;
    } catch (err) {
      await probe.end({ timeout: 0 }).catch(() => {});
      if (proc.exitCode !== null || Date.now() > deadline) {
        await stop().catch(() => {});
        throw new Error(`PgBouncer did not start: ${String(err)}\n${out}`);
      }
      await Bun.sleep(50);
    }
  }
  return { port, via, log: () => out, stop };
}

let shared: Promise<PgBouncer> | null = null;

/**
 * One PgBouncer for the whole test process, started on first use and stopped when the process exits:
 * `TEST_DATABASE_POOLER=pgbouncer` routes every test app's database through it (see buildTestApp).
 */
export function sharedPgBouncer(serverUrl: string): Promise<PgBouncer> {
  shared ??= startPgBouncer(serverUrl, { poolSize: 20 }).then((pgb) => {
    process.once("exit", () => void pgb.stop().catch(() => {}));
    return pgb;
  });
  return shared;
}
