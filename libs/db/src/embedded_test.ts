import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { connectDatabase } from "./connect.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrateDatabase } from "./migrate.ts";

// Not mkdtemp: its 0700 folder would keep the unprivileged postgres user out.
const dir = join("/tmp", `embedded-pg-test-${process.pid}-${Date.now()}`);
mkdirSync(dir, { recursive: true });
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROOT = new URL("../../..", import.meta.url).pathname;

describe("the embedded PostgreSQL default", () => {
  test("boots, migrates and serves; other processes join it; release stops it", async () => {
    const server = await startEmbeddedPostgres(dir);
    expect(server.owned).toBe(true);
    expect(server.url).toMatch(/^postgres:\/\/postgres:postgres@127\.0\.0\.1:\d+\/postgres$/);
    const handle = connectDatabase(server.url);
    try {
      await migrateDatabase(handle);
      const [org] =
        await handle.sql`insert into organizations (name, storage_quota_bytes, site_limit) values ('E', 1, 1) returning id`;
      expect(org!.id).toBeString();
      const [{ server_version: version }] = (await handle.sql`show server_version`) as any;
      expect(Number(version.split(".")[0])).toBeGreaterThanOrEqual(15);

      // Another process (the admin CLI) uses the running server instead of starting its own.
      const proc = Bun.spawn(["bun", "scripts/admin.ts", "org:create", "--name", "FromCli"], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: "",
          DATA_DIR: dir,
          SECRET_KEY: "embedded-test-secret-000",
          LOG_LEVEL: "error",
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(await proc.exited).toBe(0);
      const [{ n }] =
        (await handle.sql`select count(*)::int as n from organizations where name = 'FromCli'`) as any;
      expect(n).toBe(1);
      // It joined rather than replaced: the record still names this server.
      expect(JSON.parse(readFileSync(join(dir, "pg.json"), "utf8")).url).toBe(server.url);
    } finally {
      await handle.close();
      await server.release();
    }
    expect(existsSync(join(dir, "pg.json"))).toBe(false);
    const probe = postgres(server.url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    await expect(probe`select 1`).rejects.toThrow();
    await probe.end();
  });

  test("a start killed with SIGKILL leaves nothing that blocks the next start", async () => {
    const proc = Bun.spawn(
      [
        "bun",
        "-e",
        `import { startEmbeddedPostgres } from "@site/db"; const s = await startEmbeddedPostgres(${JSON.stringify(dir)}); console.log("up"); setInterval(() => {}, 1e6);`,
      ],
      { cwd: ROOT, stdout: "pipe", stderr: "inherit" },
    );
    const reader = proc.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("up");
    proc.kill("SIGKILL");
    await proc.exited;
    const next = await startEmbeddedPostgres(dir);
    const sql = postgres(next.url, { max: 1, onnotice: () => {} });
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
    await sql.end();
    // Whichever process started it, a later owner can stop it: release the orphan too.
    if (!next.owned) {
      const pid = Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGINT");
      const deadline = Date.now() + 10_000;
      while (existsSync(join(dir, "pg", "postmaster.pid")) && Date.now() < deadline) await Bun.sleep(50);
    } else {
      await next.release();
    }
  });
});
