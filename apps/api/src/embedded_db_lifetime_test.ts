import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { childrenWith } from "@site/db/testing";
import postgres from "postgres";
import { spawnApi } from "../testing/mod.ts";

// Issue 25.5: the embedded PostgreSQL (no DATABASE_URL) outlived a SIGKILLed server, and the next
// server that joined it left it running at its clean exit too. The API runs here as users run it.
// Not mkdtemp: its 0700 folder would keep the unprivileged postgres user out (when run as root).
const dir = join("/tmp", `embedded-lifetime-${process.pid}-${Date.now()}`);
mkdirSync(dir, { recursive: true });
chmodSync(dir, 0o755);
const ROOT = new URL("../../..", import.meta.url).pathname;

const env = { DATABASE_URL: "", DATA_DIR: dir, LOG_LEVEL: "error" };

function postmaster(): number {
  return Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
}
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
async function gone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await Bun.sleep(50);
  return !alive(pid);
}
async function answers(url: string): Promise<boolean> {
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
afterAll(async () => {
  try {
    const pid = postmaster();
    if (alive(pid)) {
      process.kill(pid, "SIGINT");
      await gone(pid, 10_000);
    }
  } catch {}
  rmSync(dir, { recursive: true, force: true });
});

describe("the embedded PostgreSQL stops with the server that owns it", () => {
  test("a SIGKILLed API takes its embedded PostgreSQL with it", async () => {
    const api = await spawnApi(env);
    const pid = postmaster();
    const url = (JSON.parse(readFileSync(join(dir, "pg.json"), "utf8")) as { url: string }).url;
    expect(await answers(url)).toBe(true);
    await api.kill();
    expect(await gone(pid, 10_000)).toBe(true);
    expect(await answers(url)).toBe(false);
  }, 90_000);

  test("an orphaned server (owner and watchdog both killed) is adopted by the next API and stopped at its clean exit", async () => {
    // An owner killed together with its watchdog leaves PostgreSQL running: an orphan.
    const owner = Bun.spawn(
      [
        "bun",
        "-e",
        `import { startEmbeddedPostgres } from "@site/db"; await startEmbeddedPostgres(${JSON.stringify(dir)}); console.log("up"); setInterval(() => {}, 1e6);`,
      ],
      { cwd: ROOT, stdout: "pipe", stderr: "inherit" },
    );
    const { value } = await owner.stdout.getReader().read();
    expect(new TextDecoder().decode(value)).toContain("up");
    const pid = postmaster();
    for (const dog of childrenWith(owner.pid, "site-pg-watchdog")) process.kill(dog, "SIGKILL");
    owner.kill("SIGKILL");
    await owner.exited;
    await Bun.sleep(500);
    expect(alive(pid)).toBe(true);

    // The next API joins it, owns it, and its clean exit stops it.
    const api = await spawnApi(env);
    expect(postmaster()).toBe(pid);
    api.proc.kill("SIGTERM");
    const code = await api.proc.exited;
    if (code !== 0) console.log(api.logs());
    expect(code).toBe(0);
    expect(await gone(pid, 10_000)).toBe(true);
  }, 90_000);
});
