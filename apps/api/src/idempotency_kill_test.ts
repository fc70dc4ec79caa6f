import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { creditLedger, idempotencyKeys, mediaFiles, organizations, screenshotRenders, sites } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type ApiProcess, buildTestApp, spawnApi, type TestApp } from "../testing/mod.ts";

// An idempotent retry after a crash (issue 38; decision 1411, Stripe's "atomic phases"): 60 keyed POSTs
// (sites, clips, imports) to `bun run apps/api`, the process SIGKILLed mid-burst, a new process on the
// same database, every key retried → each key's work done once and each retry answered with the first
// result. This process only seeds and reads.
type Json = any;
let h: TestApp;
let tls: TlsFixture;
let images: ReturnType<typeof Bun.serve>;
const procs: ApiProcess[] = [];
let caFile: string;

beforeAll(async () => {
  tls = createTlsFixture();
  caFile = join(tmpdir(), `idem-kill-ca-${process.pid}.pem`);
  writeFileSync(caFile, tls.ca);
  // Images arrive slowly: imports are still fetching when the process dies.
  images = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch() {
      await Bun.sleep(300 + Math.random() * 900);
      return new Response(sampleImage("png", { width: 8, height: 8, size: 2000 }));
    },
  });
  h = await buildTestApp();
});
afterAll(async () => {
  for (const p of procs) await p.kill().catch(() => {});
  images?.stop(true);
  await h?.close();
});

async function start(): Promise<ApiProcess> {
  const p = await spawnApi({
    DATABASE_URL: h.databaseUrl,
    FETCH_ALLOW_HOSTS: `localhost:${images.port}`,
    NODE_EXTRA_CA_CERTS: caFile,
    CHROMIUM_PATH: "/bin/true",
    FFMPEG_PATH: "/bin/true",
    MEDIA_SWEEP_EVERY_MS: "0",
    LOG_LEVEL: "error",
  });
  procs.push(p);
  return p;
}

type Call = { key: string; kind: "site" | "clip" | "import"; path: string; body: Json; tag: string };
type Answer = { status: number; body: Json; replayed: string | null; retryAfter: string | null };

const send = async (base: string, apiKey: string, c: Call): Promise<Answer> => {
  const res = await fetch(`${base}${c.path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${apiKey}`,
      "content-type": "application/json",
      "idempotency-key": c.key,
    },
    body: JSON.stringify(c.body),
  });
  return {
    status: res.status,
    body: await res.json(),
    replayed: res.headers.get("idempotent-replayed"),
    retryAfter: res.headers.get("retry-after"),
  };
};

describe("an idempotent retry after the API was SIGKILLed mid-burst", () => {
  test("60 keyed POSTs (sites, clips, imports), SIGKILL, restart, every key retried: each key's work done once, each retry answered with the first result", async () => {
    const o = await h.seedOrg({ credits: 10_000, siteLimit: 100 });
    const library = await h.newSite(o.key);
    const run = Math.random().toString(36).slice(2, 8);
    const calls: Call[] = [];
    for (let i = 0; i < 20; i++) {
      const slug = `kill-${run}-${i}`;
      calls.push({
        key: `site-${run}-${i}`,
        kind: "site",
        path: "/api/v1/sites",
        body: { name: `S${i}`, slug },
        tag: slug,
      });
      const url = `https://example.com/${run}/clip-${i}`;
      calls.push({
        key: `clip-${run}-${i}`,
        kind: "clip",
        path: "/api/v1/social/media/clips",
        body: { url, motion: "scroll" },
        tag: url,
      });
      const image = `https://localhost:${images.port}/img-${run}-${i}.png`;
      calls.push({
        key: `import-${run}-${i}`,
        kind: "import",
        path: `/api/v1/sites/${library.id}/media/import-url`,
        body: { url: image, alt: "" },
        tag: image,
      });
    }

    const first = await start();
    const answered = new Map<string, Answer>();
    const burst = calls.map((c) =>
      send(first.url, o.key, c)
        .then((a) => void answered.set(c.key, a))
        .catch(() => {}),
    );
    // Mid-burst: once a quarter has its answer.
    const deadline = Date.now() + 20_000;
    while (answered.size < 15 && Date.now() < deadline) await Bun.sleep(5);
    await first.kill();
    await Promise.all(burst);
    const unanswered = calls.filter((c) => !answered.has(c.key));
    expect(unanswered.length).toBeGreaterThan(0);
    for (const a of answered.values()) expect(a.status).toBeLessThan(500);

    const second = await start();
    // A key held by a request that died mid-work: 409 whose Retry-After says when its lease ends.
    const held = await h.db
      .select({ key: idempotencyKeys.key, until: idempotencyKeys.lockedUntil })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.orgId, o.org.id), eq(idempotencyKeys.state, "in_flight")));
    // (Imports wait 300 ms or more for their image: some were still fetching at the kill.)
    expect(held.length).toBeGreaterThan(0);
    const c = calls.find((x) => x.key === held[0]!.key)!;
    const during = await send(second.url, o.key, c);
    expect(during.status).toBe(409);
    const leaseLeft = (held[0]!.until!.getTime() - Date.now()) / 1000;
    expect(Number(during.retryAfter)).toBeGreaterThan(1);
    expect(Math.abs(Number(during.retryAfter) - leaseLeft)).toBeLessThanOrEqual(3);
    // The leases run out (as 60 s would), then every key is retried.
    await h.db
      .update(idempotencyKeys)
      .set({ lockedUntil: sql`now()` as never })
      .where(and(eq(idempotencyKeys.orgId, o.org.id), eq(idempotencyKeys.state, "in_flight")));
    const retried = new Map<string, Answer>();
    for (const c of calls) retried.set(c.key, await send(second.url, o.key, c));

    for (const c of calls) {
      const again = retried.get(c.key)!;
      const before = answered.get(c.key);
      if (before) {
        // Answered before the kill: the same answer again.
        expect({ key: c.key, status: again.status, body: again.body, replayed: again.replayed }).toEqual({
          key: c.key,
          status: before.status,
          body: before.body,
          replayed: "true",
        });
      }
      expect({ key: c.key, status: again.status }).toEqual({
        key: c.key,
        status: c.kind === "clip" ? 202 : 201,
      });
    }
    // Each site once, and its key's answer is that site (never SLUG_TAKEN for its own site).
    const siteCalls = calls.filter((c) => c.kind === "site");
    const siteRows = await h.db
      .select({ id: sites.id, slug: sites.slug })
      .from(sites)
      .where(
        inArray(
          sites.slug,
          siteCalls.map((c) => c.tag),
        ),
      );
    expect(siteRows).toHaveLength(20);
    for (const c of siteCalls)
      expect(retried.get(c.key)!.body.site.id).toBe(siteRows.find((r) => r.slug === c.tag)!.id);
    // Each clip once, charged once.
    const clipCalls = calls.filter((c) => c.kind === "clip");
    const clips = await h.db
      .select({ id: screenshotRenders.id, url: screenshotRenders.sourceUrl })
      .from(screenshotRenders)
      .where(and(eq(screenshotRenders.orgId, o.org.id), eq(screenshotRenders.kind, "clip")));
    expect(clips).toHaveLength(20);
    for (const c of clipCalls) {
      const mine = clips.filter((r) => r.url === c.tag);
      expect({ url: c.tag, n: mine.length }).toEqual({ url: c.tag, n: 1 });
      expect(retried.get(c.key)!.body.clipId).toBe(mine[0]!.id);
    }
    const debits = await h.db
      .select({ n: sql<number>`count(*)::int` })
      .from(creditLedger)
      .where(and(eq(creditLedger.orgId, o.org.id), eq(creditLedger.reason, "clip_debit")));
    expect(debits[0]!.n).toBe(20);
    const [org] = await h.db
      .select({ credits: organizations.credits })
      .from(organizations)
      .where(eq(organizations.id, o.org.id));
    expect(org!.credits).toBe(10_000 - 20 * 30);
    // Each import once: 20 files, each key's answer naming its own.
    const files = await h.db
      .select({ key: mediaFiles.key })
      .from(mediaFiles)
      .where(eq(mediaFiles.siteId, library.id));
    expect(files).toHaveLength(20);
    const paths = calls
      .filter((c) => c.kind === "import")
      .map((c) => retried.get(c.key)!.body.path as string);
    expect(new Set(paths).size).toBe(20);
    expect(new Set(files.map((f) => f.key))).toEqual(new Set(paths));
    await second.kill();
  }, 120_000);
});
