// Real processes for the render daemon's fault tests: a daemon of its own (apps/render-daemon/src/main.ts)
// and a Redis server of the test's own, each stopped by the test.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "@site/browser/testing";
import { freePort, pidsMentioning } from "@site/db/testing";

/** A render daemon in a process of its own (and a process group of its own). */
export type DaemonProcess = {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` to its process group (the daemon and FFmpeg; Chromium is in groups of its own). */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILLs it and every process it started (its Chromium, found by its temp folder); removes that folder. */
  kill(): void;
};

/**
 * Starts `bun apps/render-daemon/src/main.ts` (`warm: false`: the same without its warm-up,
 * testing/daemon_cold.ts) with `env` over this process's environment, its TMPDIR (Chromium's profiles) a
 * folder of its own; resolves once it takes jobs.
 */
export async function spawnDaemon(
  env: Record<string, string>,
  opts: { warm?: boolean } = {},
): Promise<DaemonProcess> {
  const tmp = mkdtempSync(join(tmpdir(), "render-daemon-proc-"));
  const script =
    opts.warm === false ? "apps/render-daemon/testing/daemon_cold.ts" : "apps/render-daemon/src/main.ts";
  const child = spawn("bun", [script], {
    cwd: join(import.meta.dir, "../../.."),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LOG_LEVEL: "info", TMPDIR: tmp, ...env },
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    out += String(d);
  });
  const proc: DaemonProcess = {
    child,
    output: () => out,
    signal(signal) {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // already gone
      }
    },
    kill() {
      for (const pid of [-(child.pid as number), ...pidsMentioning(tmp)]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      rmSync(tmp, { recursive: true, force: true });
    },
  };
  await until(async () => out.includes("render daemon taking jobs") || child.exitCode !== null, 120_000);
  if (child.exitCode !== null) throw new Error(`the daemon exited at start:\n${out.slice(-3000)}`);
  return proc;
}

/** A Redis server of the test's own on 127.0.0.1 (no persistence: a restart comes back empty). */
export type RedisProcess = {
  url: string;
  /** SIGKILLs it and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

/** Starts `redis-server --port <free port> --save "" --appendonly no` on 127.0.0.1. */
export async function startRedisServer(): Promise<RedisProcess> {
  const port = freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    const c = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    c.stdout?.on("data", (d) => {
      out += String(d);
    });
    child = c;
    await until(async () => out.includes("Ready to accept connections") || c.exitCode !== null, 20_000);
    if (c.exitCode !== null) throw new Error(`redis-server did not start:\n${out}`);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill("SIGKILL");
    await until(async () => c.exitCode !== null || c.signalCode !== null, 10_000);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, restart: start, stop: kill };
}
