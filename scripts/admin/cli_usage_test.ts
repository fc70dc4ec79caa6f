import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";

// The operator CLI as a person types it: help on stdout, mistakes named, lists as JSON arrays.
let db: DbHandle;
let dataDir: string;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
  dataDir = mkdtempSync(join(tmpdir(), "admin-cli-"));
});
afterAll(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ROOT = new URL("../..", import.meta.url).pathname;

async function admin(args: string[], extra: Record<string, string | undefined> = {}) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    SECRET_KEY: "admin-cli-test-secret-0123456789",
    LOG_LEVEL: "error",
    ...extra,
  };
  for (const k of ["PUBLIC_BASE_URL", "PORT", "HOST"]) if (!(k in extra)) delete env[k];
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete env[k];
  const proc = Bun.spawn(["bun", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return {
    code,
    stdout,
    stderr,
    json: code === 0 && /^[[{]/.test(stdout) ? JSON.parse(stdout) : null,
  };
}

describe("bun run admin: help and mistakes", () => {
  test("--help and -h print the usage on stdout with exit 0, naming every command", async () => {
    for (const flag of ["--help", "-h"]) {
      const r = await admin([flag]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).toStartWith("usage: bun run admin <command>");
      for (const c of ["org:create", "org:list", "user:list", "key:list", "template:list", "media:share"])
        expect(r.stdout).toContain(c);
    }
    const one = await admin(["org:create", "--help"]);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("--credits");
    // No command at all: the usage, on stdout, but the call did nothing.
    const none = await admin([]);
    expect(none.code).toBe(1);
    expect(none.stdout).toStartWith("usage:");
  });

  test("an unknown flag exits 1 naming it and the nearest flag, and creates nothing", async () => {
    const name = `Typo ${Date.now()}`;
    const r = await admin(["org:create", "--name", name, "--credit", "100"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown flag --credit");
    expect(r.stderr).toContain("did you mean --credits?");
    expect(await db.sql`select 1 from organizations where name = ${name}`).toHaveLength(0);

    const eq = await admin(["key:list", "--orgs=x"]);
    expect([eq.code, eq.stderr.includes("--orgs"), eq.stderr.includes("did you mean --org?")]).toEqual([
      1,
      true,
      true,
    ]);
    const none = await admin(["org:list", "--verbose", "1"]);
    expect([none.code, none.stderr.includes("unknown flag --verbose")]).toEqual([1, true]);
    const cmd = await admin(["org:lst"]);
    expect(cmd.code).toBe(1);
    expect(cmd.stderr).toContain('unknown command "org:lst"; did you mean "org:list"?');
  });
});

describe("bun run admin: list commands print JSON arrays", () => {
  test("org:list, user:list, key:list (never the secret) and template:list", async () => {
    const org = (await admin(["org:create", "--name", "Listed", "--credits", "7"])).json;
    const owner = (
      await admin(["user:create", "--org", org.id, "--email", "b-owner@listed.test", "--role", "owner"])
    ).json;
    const editor = (await admin(["user:create", "--org", org.id, "--email", "a-editor@listed.test"])).json;
    const key = (await admin(["key:create", "--org", org.id, "--user", owner.id, "--scopes", "sites:write"]))
      .json;
    await admin(["key:revoke", "--key-id", key.id]);
    const key2 = (
      await admin(["key:create", "--org", org.id, "--user", editor.id, "--scopes", "content:read"])
    ).json;

    const orgs = await admin(["org:list"]);
    expect(orgs.code).toBe(0);
    expect(Array.isArray(orgs.json)).toBe(true);
    expect(orgs.json.find((o: { id: string }) => o.id === org.id)).toMatchObject({
      name: "Listed",
      credits: 7,
      storageUsedBytes: 0,
    });

    const members = await admin(["user:list", "--org", org.id]);
    expect(members.json).toEqual([
      { id: editor.id, email: "a-editor@listed.test", role: "editor" },
      { id: owner.id, email: "b-owner@listed.test", role: "owner" },
    ]);

    const keys = await admin(["key:list", "--org", org.id]);
    expect(
      keys.json.map((k: { id: string; revoked: boolean; scopes: string[] }) => [k.id, k.revoked, k.scopes]),
    ).toEqual([
      [key.id, true, ["sites:write"]],
      [key2.id, false, ["content:read"]],
    ]);
    const [{ hash }] = (await db.sql`select secret_hash as hash from api_keys where id = ${key2.id}`) as any;
    expect(keys.stdout).not.toContain(key2.key);
    expect(keys.stdout).not.toContain(hash);
    expect(keys.stdout).not.toMatch(/secret|sk_/i);

    const [site] =
      await db.sql`insert into sites (org_id, name, slug) values (${org.id}, 'Tpl host', ${`tpl-${Date.now()}`}) returning id`;
    await admin(["template:create", "--slug", "listed-tpl", "--site", site!.id, "--status", "withdrawn"]);
    const tpls = await admin(["template:list"]);
    expect(tpls.code).toBe(0);
    expect(tpls.json.find((t: { slug: string }) => t.slug === "listed-tpl")).toMatchObject({
      siteId: site!.id,
      status: "withdrawn",
    });

    const unknownOrg = await admin(["user:list", "--org", "00000000-0000-0000-0000-000000000000"]);
    expect([unknownOrg.code, unknownOrg.stderr.includes("organization not found")]).toEqual([1, true]);
    const noOrg = await admin(["key:list"]);
    expect([noOrg.code, noOrg.stderr.includes("--org is required")]).toEqual([1, true]);
  }, 60_000);
});

describe("bun run admin honours DATA_DIR and PORT", () => {
  test("with no server on DATA_DIR it says so on stderr, and PORT beats a stopped server's record", async () => {
    const empty = mkdtempSync(join(tmpdir(), "admin-empty-"));
    try {
      const alone = await admin(["server:info"], { DATA_DIR: empty, PORT: "4567" });
      expect(alone.code).toBe(0);
      expect(alone.json).toMatchObject({
        publicBaseUrl: "http://127.0.0.1:4567",
        running: false,
        dataDir: empty,
      });
      expect(alone.stderr).toContain(`no server is running on DATA_DIR=${empty}`);

      // A server that ran on 4100 and stopped (its pid is gone): PORT names where the next one listens.
      writeFileSync(
        join(empty, "api.json"),
        JSON.stringify({
          publicBaseUrl: "http://127.0.0.1:4100",
          url: "http://127.0.0.1:4100",
          pid: 2 ** 22 + 12345,
          startedAt: new Date().toISOString(),
        }),
      );
      const stale = await admin(["server:info"], { DATA_DIR: empty, PORT: "4567" });
      expect(stale.json.publicBaseUrl).toBe("http://127.0.0.1:4567");
      const lastKnown = await admin(["server:info"], { DATA_DIR: empty });
      expect(lastKnown.json.publicBaseUrl).toBe("http://127.0.0.1:4100");

      // A running server's record wins over PORT (this test process stands in for it).
      writeFileSync(
        join(empty, "api.json"),
        JSON.stringify({
          publicBaseUrl: "http://127.0.0.1:4200",
          url: "http://127.0.0.1:4200",
          pid: process.pid,
          startedAt: new Date().toISOString(),
        }),
      );
      const live = await admin(["server:info"], { DATA_DIR: empty, PORT: "4567" });
      expect(live.json).toMatchObject({ publicBaseUrl: "http://127.0.0.1:4200", running: true });
      expect(live.stderr).toBe("");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
