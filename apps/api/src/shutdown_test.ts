import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mediaFiles, organizations } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { sampleImage, testContext } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { eq, sql } from "drizzle-orm";
import { spawnApi } from "../testing/mod.ts";

type Json = any;

// The API as an operator runs it (`bun run apps/api`), on local disk, with a slow HTTPS host to import from.
let tls: TlsFixture;
let host: ReturnType<typeof Bun.serve>;
let caFile: string;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ctx: Context;
beforeAll(async () => {
  tls = createTlsFixture();
  caFile = join(mkdtempSync(join(tmpdir(), "shutdown-ca-")), "ca.pem");
  writeFileSync(caFile, tls.ca);
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch(req) {
      const ms = Number(new URL(req.url).searchParams.get("ms") ?? "0");
      await Bun.sleep(ms);
      return new Response(sampleImage("png", { width: 5, height: 5, size: 3000 }));
    },
  });
  db = await createTestDatabase();
  ctx = testContext(db.db);
});
afterAll(async () => {
  host.stop(true);
  await db.close();
});

async function seed() {
  const org = await createOrganization(ctx, { name: "Shutdown", siteLimit: 10 });
  const user = await createMember(ctx, { orgId: org.id, email: `${Date.now()}@example.test`, role: "owner" });
  const { key } = await createApiKey(ctx, {
    orgId: org.id,
    userId: user.id,
    scopes: ["content:read", "content:write", "sites:write"],
  });
  return { orgId: org.id, key };
}

function env(dataDir: string, extra: Record<string, string> = {}) {
  return {
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    FETCH_ALLOW_HOSTS: `localhost:${host.port}`,
    NODE_EXTRA_CA_CERTS: caFile,
    IMPORT_TIMEOUT_MS: "20000",
    ...extra,
  };
}

/** A PUT whose body trickles: `chunks` pieces of `bytes`, one every `everyMs`. */
function slowBody(bytes: Uint8Array, chunks: number, everyMs: number): ReadableStream<Uint8Array> {
  const size = Math.ceil(bytes.byteLength / chunks);
  let i = 0;
  return new ReadableStream({
    async pull(c) {
      if (i * size >= bytes.byteLength) return c.close();
      if (i > 0) await Bun.sleep(everyMs);
      c.enqueue(bytes.subarray(i * size, (i + 1) * size));
      i++;
    },
  });
}

describe("SIGTERM: stop accepting, finish what is in flight within SHUTDOWN_GRACE_MS, answer the rest 503", () => {
  test("slow imports and large signed PUTs in flight all get an HTTP answer; then the process exits and says so", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shutdown-"));
    const api = await spawnApi(env(dataDir, { SHUTDOWN_GRACE_MS: "3000" }));
    try {
      const { key } = await seed();
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const site = (await (
        await fetch(`${api.url}/api/v1/sites`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ name: "S", slug: `sd-${Date.now()}` }),
        })
      ).json()) as Json;
      const siteId = site.site.id as string;
      const importing = (ms: number) =>
        fetch(`${api.url}/api/v1/sites/${siteId}/media/import-url`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ url: `https://localhost:${host.port}/p.png?ms=${ms}` }),
        });
      const big = sampleImage("png", { width: 100, height: 100, size: 5 * 1024 * 1024 });
      const prepare = async () =>
        (await (
          await fetch(`${api.url}/api/v1/sites/${siteId}/media/upload`, {
            method: "POST",
            headers: auth,
            body: JSON.stringify({ contentType: "image/png", size: big.byteLength }),
          })
        ).json()) as Json;
      const preps = [await prepare(), await prepare()];
      const putting = (prep: Json, chunks: number, everyMs: number) =>
        fetch(prep.upload.url.replace(/^https?:\/\/[^/]+/, api.url), {
          method: "PUT",
          headers: { ...prep.upload.headers, "content-length": String(big.byteLength) },
          body: slowBody(big, chunks, everyMs),
          duplex: "half",
        } as RequestInit);
      const t0 = performance.now();
      const inFlight = [
        ...[800, 1200, 1600].map((ms) => importing(ms).then((r) => ({ what: "import-fast", r }))),
        ...[15000, 15000].map((ms) => importing(ms).then((r) => ({ what: "import-slow", r }))),
        putting(preps[0], 10, 100).then((r) => ({ what: "put-fast", r })),
        putting(preps[1], 100, 200).then((r) => ({ what: "put-slow", r })),
      ].map((p) => p.catch((err: unknown) => ({ what: "no answer", r: null as Response | null, err })));
      await Bun.sleep(400);
      api.proc.kill("SIGTERM");
      await Bun.sleep(100);
      // The listener is closed at once: a new connection is refused.
      const late = await fetch(`${api.url}/healthz`).then(
        (r) => r.status,
        () => "refused",
      );
      expect(late === "refused" || late === 503).toBe(true);
      const answers = await Promise.all(inFlight);
      const seen = answers.map((a) => `${a.what}:${a.r?.status ?? "none"}`).sort();
      expect(seen).toEqual(
        [
          "import-fast:201",
          "import-fast:201",
          "import-fast:201",
          "import-slow:503",
          "import-slow:503",
          "put-fast:200",
          "put-slow:503",
        ].sort(),
      );
      for (const a of answers.filter((x) => x.r?.status === 503)) {
        expect(a.r!.headers.get("connection")).toBe("close");
        expect(Number(a.r!.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(((await a.r!.json()) as Json).error.code).toBe("SERVICE_UNAVAILABLE");
      }
      expect(await api.proc.exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(8000);
      expect(api.logs()).toContain('"msg":"api stopped"');
      // What landed is listed, counted and stored; nothing else is.
      const files = await db.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId));
      expect(files).toHaveLength(4);
    } finally {
      await api.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 40_000);
});

describe("crash consistency: SIGKILL mid-PUT and mid-import", () => {
  test("no half-file is listed, no quota byte is counted that no file holds, and the half-file is swept after a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "crash-"));
    const settings = { UPLOAD_TRANSFER_TIMEOUT_MS: "2000", MEDIA_SWEEP_EVERY_MS: "300" };
    let api = await spawnApi(env(dataDir, { ...settings, IMPORT_TIMEOUT_MS: "20000" }));
    try {
      const { key, orgId } = await seed();
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const site = (await (
        await fetch(`${api.url}/api/v1/sites`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ name: "C", slug: `cr-${Date.now()}` }),
        })
      ).json()) as Json;
      const siteId = site.site.id as string;
      const big = sampleImage("png", { width: 9, height: 9, size: 4 * 1024 * 1024 });
      const prep = (await (
        await fetch(`${api.url}/api/v1/sites/${siteId}/media/upload`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ contentType: "image/png", size: big.byteLength }),
        })
      ).json()) as Json;
      const put = fetch(prep.upload.url.replace(/^https?:\/\/[^/]+/, api.url), {
        method: "PUT",
        headers: { ...prep.upload.headers, "content-length": String(big.byteLength) },
        body: slowBody(big, 50, 100),
        duplex: "half",
      } as RequestInit).catch(() => null);
      const imp = fetch(`${api.url}/api/v1/sites/${siteId}/media/import-url`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ url: `https://localhost:${host.port}/p.png?ms=10000` }),
      }).catch(() => null);
      await Bun.sleep(1200);
      const tmp = join(dataDir, "objects", ".tmp");
      expect(readdirSync(tmp).length).toBeGreaterThan(0); // the PUT is half-written
      await api.kill();
      expect(await put).toBeNull();
      expect(await imp).toBeNull();
      // Nothing half is listed or counted.
      const files = await db.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId));
      expect(files).toEqual([]);
      const [org] = await db.db.select().from(organizations).where(eq(organizations.id, orgId));
      expect(org!.storageUsedBytes).toBe(0);
      const reservations = await db.db.execute(
        sql`select count(*)::int as n from usage_events where site_id = ${siteId} and reserved_until is not null`,
      );
      // The import's attempt and upload slot stay reserved until they lapse (IMPORT_TIMEOUT_MS + 60 s).
      expect(Number((reservations as unknown as { n: number }[])[0]!.n)).toBe(2);
      // Restarted, the sweeper removes the half-written file once it is older than the longest transfer.
      api = await spawnApi(env(dataDir, { ...settings, IMPORT_TIMEOUT_MS: "2000" }));
      const listed = (await (
        await fetch(`${api.url}/api/v1/sites/${siteId}/media`, { headers: auth })
      ).json()) as Json;
      expect(listed.images).toEqual([]);
      let left = readdirSync(tmp).filter((n) => !n.startsWith("probe-"));
      for (let i = 0; i < 100 && left.length > 0; i++) {
        await Bun.sleep(100);
        left = readdirSync(tmp).filter((n) => !n.startsWith("probe-"));
      }
      expect(left).toEqual([]);
    } finally {
      await api.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 40_000);
});
