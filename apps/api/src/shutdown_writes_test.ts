import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pages } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { testContext } from "@site/domain/testing";
import { eq } from "drizzle-orm";
import { spawnApi } from "../testing/mod.ts";

type Json = any;

// Issue 25.5: "a request whose write has begun is finished, not answered 503; a 503 at shutdown means
// nothing was written". Page writes whose bodies trickle in and end around the moment the grace period
// runs out: each is either stored and answered 201, or answered 503 and not stored — never stored
// after a 503 (a client that follows "retry it" would write twice).
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ctx: Context;
beforeAll(async () => {
  db = await createTestDatabase();
  ctx = testContext(db.db);
});
afterAll(async () => {
  await db.close();
});

/**
 * A raw HTTP/1.1 request whose body is sent whole except its last byte, which follows at `lastAt`
 * (a performance.now() time); resolves with the answer's status, or null when none came.
 */
function trickled(url: string, path: string, headers: Record<string, string>, body: string, lastAt: number) {
  const u = new URL(url);
  const bytes = Buffer.from(body);
  return new Promise<{ status: number | null; head: string; body: string }>((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    let got = "";
    const head = [
      `POST ${path} HTTP/1.1`,
      `host: ${u.host}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      `content-length: ${bytes.byteLength}`,
      "",
      "",
    ].join("\r\n");
    socket.on("connect", () => {
      socket.write(head);
      socket.write(bytes.subarray(0, -1));
      setTimeout(() => socket.write(bytes.subarray(-1), () => {}), Math.max(0, lastAt - performance.now()));
    });
    socket.on("data", (d) => {
      got += d.toString();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      const end = got.indexOf("\r\n\r\n");
      resolve({ status: m ? Number(m[1]) : null, head: got.slice(0, end), body: got.slice(end + 4) });
    });
    // Keep-alive: once a whole answer is in, close our side.
    socket.on("data", () => {
      const end = got.indexOf("\r\n\r\n");
      const len = /content-length: (\d+)/i.exec(got.slice(0, end));
      if (end >= 0 && len && got.length - end - 4 >= Number(len[1])) socket.end();
    });
  });
}

describe("SIGTERM: a 503 means nothing was written", () => {
  test("page writes whose bodies end around the end of the grace period: stored and 201, or not stored and 503", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shutdown-writes-"));
    const graceMs = 1500;
    const api = await spawnApi({
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      SHUTDOWN_GRACE_MS: String(graceMs),
      RETRY_AFTER_SECONDS: "7",
    });
    try {
      const org = await createOrganization(ctx, { name: "Writes", siteLimit: 5 });
      const user = await createMember(ctx, {
        orgId: org.id,
        email: `${crypto.randomUUID()}@example.test`,
        role: "owner",
      });
      const { key } = await createApiKey(ctx, {
        orgId: org.id,
        userId: user.id,
        scopes: ["content:write", "sites:write"],
      });
      const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const site = (await (
        await fetch(`${api.url}/api/v1/sites`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ name: "W", slug: `w-${crypto.randomUUID().slice(0, 8)}` }),
        })
      ).json()) as Json;
      const siteId = site.site.id as string;

      // A first write warms the parser workers.
      const warm = await fetch(`${api.url}/api/v1/sites/${siteId}/pages`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ path: "/warm", title: "Warm", content: "# Warm" }),
      });
      expect(warm.status).toBe(201);

      // SIGTERM at `t0`; the cut comes at t0 + grace. Bodies end from 900 ms before it to 300 ms after,
      // densest around the cut (one organization may have only a few parses waiting, so spread out).
      const t0 = performance.now() + 300;
      const cutAt = t0 + graceMs;
      const offsets = [
        -900,
        -750,
        -600,
        -450,
        -300,
        -150,
        ...Array.from({ length: 17 }, (_, i) => -100 + i * 25),
      ];
      const writes = offsets.map((offset, i) =>
        trickled(
          api.url,
          `/api/v1/sites/${siteId}/pages`,
          auth,
          JSON.stringify({ path: `/p-${i}`, title: `P${i}`, content: `# Page ${i}\n\nSome text.` }),
          cutAt + offset,
        ).then((answer) => ({ path: `/p-${i}`, offset, ...answer })),
      );
      await Bun.sleep(Math.max(0, t0 - performance.now()));
      api.proc.kill("SIGTERM");
      const answers = await Promise.all(writes);
      expect(await api.proc.exited).toBe(0);

      const stored = new Set(
        (await db.db.select({ path: pages.path }).from(pages).where(eq(pages.siteId, siteId))).map(
          (p) => p.path,
        ),
      );
      const seen = answers.map(
        (a) => `${a.offset}:${a.status}:${stored.has(a.path) ? "stored" : "not stored"}`,
      );
      // Never stored after a 503; never stored without its 201.
      for (const a of answers) {
        if (stored.has(a.path)) expect(`${a.offset}:${a.status}:stored`).toBe(`${a.offset}:201:stored`);
        else expect(`${a.offset}:${a.status}:not stored`).toMatch(/:(503|null):not stored$/);
        if (a.status === 503) {
          expect(JSON.parse(a.body).error.code).toBe("SERVICE_UNAVAILABLE");
          // Retry-After is the setting (RETRY_AFTER_SECONDS), not a constant 1.
          expect(a.head).toMatch(/\r\nretry-after: 7\r\n/i);
        }
      }
      // Both outcomes happened: bodies complete well before the cut were stored, late ones refused.
      expect(seen.filter((s) => s.endsWith(":201:stored")).length).toBeGreaterThan(0);
      expect(seen.filter((s) => s.includes(":503:")).length).toBeGreaterThan(0);
      expect(api.logs()).toContain('"msg":"api stopped"');
    } finally {
      await api.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
