import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiKeys, memberships } from "@site/db";
import { createMember, revokeApiKey } from "@site/domain/core";
import { eq, sql } from "drizzle-orm";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../testing/mod.ts";

// Two API instances on one database: this process (A, in-process) and `bun run apps/api` (B).
let a: TestApp;
let b: ApiProcess;
beforeAll(async () => {
  a = await buildTestApp();
  b = await spawnApi({ DATABASE_URL: a.databaseUrl, API_KEY_CACHE_TTL_MS: "60000" });
  // Both caches must be listening before the tests rely on them.
  for (let i = 0; i < 100 && !a.ctx.keys?.live; i++) await Bun.sleep(50);
});
afterAll(async () => {
  await b?.kill();
  await a?.close();
});

const getB = (key: string) =>
  fetch(`${b.url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
const getA = async (key: string) => (await a.call("GET", "/api/v1/sites", { key })).status;

/**
 * Proof that a process answers from its cache: it keeps accepting a key whose row changed under it. The
 * change is made with triggers off (session_replication_role = replica), so no revocation notice goes out:
 * only a process that does not look the key up again keeps answering 200.
 */
async function cachedIn(get: (k: string) => Promise<number>, key: string, keyId: string) {
  // A process starts caching once its LISTEN connection is up: give it a moment.
  for (let i = 0; i < 50; i++) {
    expect(await get(key)).toBe(200);
    await setScopesQuietly(keyId, []);
    try {
      if ((await get(key)) === 200) return true;
    } finally {
      // Restored out loud (the trigger notifies): a cache that looked up the emptied row drops it.
      await a.db
        .update(apiKeys)
        .set({ scopes: ["content:read", "content:write", "sites:write", "social:write"] })
        .where(eq(apiKeys.id, keyId));
      await a.ctx.keys?.heard(keyId, 2000);
    }
    await Bun.sleep(100);
  }
  return false;
}

async function setScopesQuietly(keyId: string, scopes: string[]) {
  await a.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.update(apiKeys).set({ scopes }).where(eq(apiKeys.id, keyId));
  });
}

describe("verified keys are cached in process; a revoke reaches every process at once", () => {
  test("both instances answer keyed reads from their cache (no key lookup per request)", async () => {
    const { key, keyId } = await a.seedOrg();
    expect(await cachedIn(getA, key, keyId)).toBe(true);
    expect(await cachedIn(getB, key, keyId)).toBe(true);
  });

  test("revoked in A, refused by B on the very next request (and by A)", async () => {
    for (let round = 0; round < 5; round++) {
      const { key, keyId } = await a.seedOrg();
      for (let i = 0; i < 3; i++) {
        expect(await getB(key)).toBe(200);
        expect(await getA(key)).toBe(200);
      }
      await revokeApiKey(a.ctx, keyId);
      expect(await getB(key)).toBe(401);
      expect(await getA(key)).toBe(401);
    }
  });

  test("a member's role change reaches every cache at once (a viewer's key may only read)", async () => {
    // Listing social accounts needs social:write, which a viewer's role does not allow (decision 0313).
    const socialB = (key: string) =>
      fetch(`${b.url}/api/v1/social/accounts`, { headers: { authorization: `Bearer ${key}` } }).then(
        (r) => r.status,
      );
    const socialA = async (key: string) => (await a.call("GET", "/api/v1/social/accounts", { key })).status;
    const { key, user, org } = await a.seedOrg({ role: "owner" });
    expect(await socialB(key)).toBe(200);
    expect(await socialA(key)).toBe(200);
    const [row] = await a.db.select().from(apiKeys).where(eq(apiKeys.userId, user.id));
    expect(row).toBeDefined();
    await createMember(a.ctx, { orgId: org.id, email: user.email, role: "viewer" });
    await Bun.sleep(50);
    expect(await socialB(key)).toBe(403);
    expect(await socialA(key)).toBe(403);
    // Reading stays allowed: the site list needs content:read only (decision 0750).
    expect(await getA(key)).toBe(200);
  });

  test("a key revoked or a member removed by plain SQL (operator, script) is dropped by every cache", async () => {
    const one = await a.seedOrg();
    const two = await a.seedOrg();
    for (const k of [one.key, two.key]) {
      expect(await getB(k)).toBe(200);
      expect(await getA(k)).toBe(200);
    }
    await a.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, one.keyId));
    await a.db.delete(memberships).where(eq(memberships.userId, two.user.id));
    await Bun.sleep(100);
    for (const k of [one.key, two.key]) {
      expect([401, 403]).toContain(await getB(k));
      expect([401, 403]).toContain(await getA(k));
    }
  });

  test("a process whose LISTEN connection dropped trusts nothing it cached until it listens again", async () => {
    const { key, keyId } = await a.seedOrg();
    expect(await getB(key)).toBe(200);
    expect(await getA(key)).toBe(200);
    // Cut every key-cache listener, then revoke behind their backs (no notice is sent).
    await a.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'site-key-cache' and datname = current_database()`,
    );
    await a.db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await tx.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, keyId));
    });
    await Bun.sleep(100);
    expect(await getB(key)).toBe(401);
    expect(await getA(key)).toBe(401);
    // They listen again and cache again.
    for (let i = 0; i < 100 && !a.ctx.keys?.live; i++) await Bun.sleep(50);
    expect(a.ctx.keys?.live).toBe(true);
  });
});
