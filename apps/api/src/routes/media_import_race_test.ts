import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mediaFiles, organizations, usageEvents } from "@site/db";
import { sampleImage } from "@site/domain/testing";
import { createTlsFixture, type TlsFixture } from "@site/net/testing";
import { eq } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

type Json = any;
const uniq = () => Math.random().toString(36).slice(2, 9);

// Issue 18.1: limits checked before a fetch and counted after it did not hold under concurrency.
let tls: TlsFixture;
let host: ReturnType<typeof Bun.serve>;
const hits = { never: 0, missing: 0, photo: 0 };
const held: (() => void)[] = [];
beforeAll(() => {
  tls = createTlsFixture();
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/never.png") {
        hits.never++;
        await new Promise<void>((r) => held.push(r)); // a host that never answers
        return new Response("late");
      }
      if (path === "/photo.png") {
        hits.photo++;
        // Slow enough that all twenty are in flight together.
        await Bun.sleep(300);
        return new Response(sampleImage("png", { width: 4, height: 4, size: 1000 }));
      }
      hits.missing++;
      return new Response("no", { status: 404 });
    },
  });
});
afterAll(() => {
  for (const r of held) r();
  host.stop(true);
});

describe("limits hold under 20 concurrent imports", () => {
  let h: TestApp;
  let owner: Awaited<ReturnType<TestApp["seedOrg"]>>;
  beforeAll(async () => {
    h = await buildTestApp({
      fetchTls: { ca: tls.ca },
      env: {
        FETCH_ALLOW_HOSTS: `localhost:${host.port}`,
        IMPORT_TIMEOUT_MS: "1500",
        MEDIA_DAILY_FETCH_ATTEMPT_LIMIT: "5",
        MEDIA_DAILY_UPLOAD_LIMIT: "3",
      },
    });
    owner = await h.seedOrg({ siteLimit: 50 });
  });
  afterAll(() => h.close());

  const newSite = async (key = owner.key) => {
    const res = await h.call("POST", "/api/v1/sites", { key, body: { name: "R", slug: `r-${uniq()}` } });
    return ((await res.json()) as Json).site.id as string;
  };
  const burst = async (siteId: string, path: string, key = owner.key) => {
    const all = await Promise.all(
      Array.from({ length: 20 }, () =>
        h
          .call("POST", `/api/v1/sites/${siteId}/media/import-url`, {
            key,
            body: { url: `https://localhost:${host.port}${path}` },
          })
          .then(async (r) => ({ status: r.status, code: ((await r.json()) as Json).error?.code })),
      ),
    );
    const count = (s: number) => all.filter((r) => r.status === s).length;
    return { all, count };
  };
  const events = (siteId: string) => h.db.select().from(usageEvents).where(eq(usageEvents.siteId, siteId));

  test("a host that never answers: with MEDIA_DAILY_FETCH_ATTEMPT_LIMIT=5 exactly 5 of 20 reach it", async () => {
    const siteId = await newSite();
    hits.never = 0;
    // Each import in flight also holds an upload slot: lift the upload cap out of the way here.
    h.ctx.config.limits.dailyUploads = 100;
    const { count, all } = await burst(siteId, "/never.png").finally(() => {
      h.ctx.config.limits.dailyUploads = 3;
    });
    expect(hits.never).toBe(5);
    expect(count(504)).toBe(5);
    expect(count(429)).toBe(15);
    expect(all.filter((r) => r.status === 429).every((r) => r.code === "RATE_LIMITED")).toBe(true);
    // The five attempts stay counted as failures; no reservation is left open.
    const ev = await events(siteId);
    expect(ev.filter((e) => e.kind === "fetch_failure" && e.reservedUntil === null)).toHaveLength(5);
    expect(ev.filter((e) => e.reservedUntil !== null)).toHaveLength(0);
  }, 30_000);

  test("a host that fails fast: 5 of 20 admitted, 5 failures counted", async () => {
    const siteId = await newSite();
    hits.missing = 0;
    h.ctx.config.limits.dailyUploads = 100;
    const { count } = await burst(siteId, "/missing.png").finally(() => {
      h.ctx.config.limits.dailyUploads = 3;
    });
    expect(hits.missing).toBe(5);
    expect(count(400)).toBe(5);
    expect(count(429)).toBe(15);
  });

  test("the daily upload cap (3) under 20 concurrent good imports: 3 land, 3 reach the host, 3 counted", async () => {
    const siteId = await newSite();
    hits.photo = 0;
    const { count } = await burst(siteId, "/photo.png");
    expect(count(201)).toBe(3);
    expect(count(429)).toBe(17);
    expect(hits.photo).toBe(3);
    expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId))).toHaveLength(3);
    const ev = await events(siteId);
    expect(ev.filter((e) => e.kind === "upload")).toHaveLength(3);
    expect(ev.filter((e) => e.kind === "fetch_failure")).toHaveLength(0);
  });

  test("the storage quota under 20 concurrent imports: never over, bytes counted = bytes listed = bytes stored", async () => {
    const org = await h.seedOrg({ storageQuotaBytes: 2500, siteLimit: 20 });
    const sites = await Promise.all(Array.from({ length: 10 }, () => newSite(org.key)));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h
          .call("POST", `/api/v1/sites/${sites[i % 10]}/media/import-url`, {
            key: org.key,
            body: { url: `https://localhost:${host.port}/photo.png` },
          })
          .then((r) => r.status),
      ),
    );
    expect(results.filter((s) => s === 201)).toHaveLength(2);
    expect(results.filter((s) => s === 403 || s === 429)).toHaveLength(18);
    const [row] = await h.db.select().from(organizations).where(eq(organizations.id, org.org.id));
    let listed = 0;
    let stored = 0;
    for (const siteId of sites) {
      for (const f of await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId)))
        listed += f.size;
      for await (const o of h.store.list(`site-media/${siteId}/`)) stored += o.size;
    }
    expect(row!.storageUsedBytes).toBe(2000);
    expect(listed).toBe(2000);
    expect(stored).toBe(2000);
  });

  test("a reservation left by a crashed process stops counting once it lapses", async () => {
    const siteId = await newSite();
    const past = new Date(Date.now() - 1000);
    await h.db
      .insert(usageEvents)
      .values(
        Array.from({ length: 5 }, () => ({ siteId, kind: "fetch_failure" as const, reservedUntil: past })),
      );
    await h.db
      .insert(usageEvents)
      .values(Array.from({ length: 3 }, () => ({ siteId, kind: "upload" as const, reservedUntil: past })));
    const res = await h.call("POST", `/api/v1/sites/${siteId}/media/import-url`, {
      key: owner.key,
      body: { url: `https://localhost:${host.port}/photo.png` },
    });
    expect(res.status).toBe(201);
  });
});
