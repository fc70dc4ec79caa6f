import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";

// CONTRACT "Many render hosts on one database": `bun scripts/serve_all.ts --daemons N` runs the API and N
// render daemons (processes of their own) on the machine's PostgreSQL and Redis.
const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl)
  console.warn("serve_all_daemons_test skipped: no TEST_REDIS_URL (several daemons share a Redis queue)");

async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until(fn: () => boolean | Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`not before the deadline: ${what()}`);
    await Bun.sleep(100);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!redisUrl)("serve_all --daemons 2", () => {
  let db: DbHandle;
  let dir: string;
  let child: ChildProcess | null = null;
  let out = "";

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), "serve-all-"));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    for (const m of out.matchAll(/ready \(pid (\d+)\)/g))
      try {
        process.kill(Number(m[1]), "SIGKILL");
      } catch {
        // Already gone: serve_all stopped it, as the test expects.
      }
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("starts the API and two daemon processes, both ready, and stops them all on SIGTERM", async () => {
    const port = await freePort();
    child = spawn(process.execPath, ["scripts/serve_all.ts", "--daemons", "2"], {
      cwd: join(import.meta.dir, "../.."),
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `serve-all-${Date.now().toString(36)}`,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        SECRET_KEY: "serve-all-test-secret-0123456789",
        LOG_LEVEL: "info",
      },
    });
    child.stdout!.on("data", (d) => {
      out += String(d);
    });
    child.stderr!.on("data", (d) => {
      out += String(d);
    });
    await until(
      () =>
        /render daemon 1 of 2 ready/.test(out) &&
        /render daemon 2 of 2 ready/.test(out) &&
        /listening on/.test(out),
      150_000,
      () => out.slice(-3000),
    );
    const pids = [...out.matchAll(/ready \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(child.pid);
    for (const pid of pids) expect(alive(pid)).toBe(true);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
    expect(code).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 240_000);
});
