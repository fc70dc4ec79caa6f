import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";

let db: DbHandle;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
});
afterAll(() => db.close());

const ROOT = new URL("../..", import.meta.url).pathname;

async function admin(...args: string[]) {
  const proc = Bun.spawn(["bun", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      SECRET_KEY: "admin-test-secret-0123456789",
      LOG_LEVEL: "error",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr, json: code === 0 ? JSON.parse(stdout) : null };
}

describe("operator CLI (bun run admin …)", () => {
  test("every command prints one JSON object; the key it makes works against the API", async () => {
    const org = await admin("org:create", "--name", "Acme", "--credits", "30", "--site-limit", "3");
    expect(org.code).toBe(0);
    expect(org.stdout.trim().split("\n")).toHaveLength(1);
    expect(Object.keys(org.json).sort()).toEqual(["credits", "id", "name"]);
    expect(org.json.credits).toBe(30);

    const credits = await admin("org:credits", "--org", org.json.id, "--add", "20");
    expect(credits.json).toEqual({ id: org.json.id, credits: 50 });
    expect((await admin("org:credits", "--org", org.json.id)).json.credits).toBe(50);

    const user = await admin(
      "user:create",
      "--org",
      org.json.id,
      "--email",
      "Owner@Acme.test",
      "--role",
      "owner",
    );
    expect(user.json).toMatchObject({ email: "owner@acme.test", role: "owner" });

    const key = await admin(
      "key:create",
      "--org",
      org.json.id,
      "--user",
      user.json.id,
      "--scopes",
      "sites:write,content:read",
    );
    expect(key.json.key).toStartWith("sk_");
    expect(key.json.id).toStartWith("key_");

    const [{ hash }] =
      (await db.sql`select secret_hash as hash from api_keys where id = ${key.json.id}`) as any;
    expect(hash).not.toBe(key.json.key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);

    const [site] =
      await db.sql`insert into sites (org_id, name, slug) values (${org.json.id}, 'Host', 'cli-host') returning id`;
    const tpl = await admin(
      "template:create",
      "--slug",
      "cli-tpl",
      "--site",
      site!.id,
      "--name",
      "CLI",
      "--description",
      "A bakery with a menu page",
    );
    expect(tpl.json).toEqual({ slug: "cli-tpl", siteId: site!.id, status: "approved" });
    const described = async () =>
      ((await db.sql`select description from templates where slug = 'cli-tpl'`) as any)[0].description;
    expect(await described()).toBe("A bakery with a menu page");
    const withdrawn = await admin(
      "template:create",
      "--slug",
      "cli-tpl",
      "--site",
      site!.id,
      "--status",
      "withdrawn",
    );
    expect(withdrawn.json.status).toBe("withdrawn");
    // An update that names no description keeps the one set.
    expect(await described()).toBe("A bakery with a menu page");

    expect((await admin("site:publish", "--site", site!.id)).json).toEqual({
      id: site!.id,
      public_content_live: true,
    });
    expect((await admin("site:unpublish", "--site", site!.id)).json).toEqual({
      id: site!.id,
      public_content_live: false,
    });

    const session = await admin("session:create", "--user", user.json.id);
    expect(session.json.cookie).toMatch(/^site_session=[\w-]+$/);

    const revoked = await admin("key:revoke", "--key-id", key.json.id);
    expect(revoked.json).toEqual({ id: key.json.id, revoked: true });
  });

  test("errors go to stderr with exit code 1, never a crash", async () => {
    const unknownOrg = await admin("org:credits", "--org", "00000000-0000-0000-0000-000000000000");
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stdout).toBe("");
    expect(unknownOrg.stderr).toContain("organization not found");
    expect(unknownOrg.stderr).not.toContain("    at ");
    const badOrg = await admin("user:create", "--org", "not-a-uuid", "--email", "a@b.c");
    expect(badOrg.code).toBe(1);
    const missing = await admin("org:create");
    expect([missing.code, missing.stderr.includes("--name")]).toEqual([1, true]);
    const badScope = await admin(
      "key:create",
      "--org",
      "00000000-0000-0000-0000-000000000000",
      "--user",
      "x",
      "--scopes",
      "all",
    );
    expect(badScope.code).toBe(1);
    const unknown = await admin("nope:nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("usage");
  });
});
