import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { mediaFiles, socialMedia } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { type Context, createApiKey, createMember, createOrganization } from "@site/domain/core";
import { pixelBombPng, testContext } from "@site/domain/testing";
import { createTlsFixture } from "@site/net/testing";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { type ApiProcess, spawnApi } from "../testing/mod.ts";

type Json = any;

// Issue 38, decompression bomb, as the finding was made: the API as its own process (`bun run
// apps/api`), a 12000×12000 PNG (18 KB on disk, 576 MB as RGBA) posted to Instagram, which takes JPEG
// only; and the same PNG uploaded to a site, imported from a 127.0.0.1 host and registered. Before: the API went from 337 MiB to 1.75 GB and /healthz stalled 2 s. The process's memory is
// the kernel's own account of it: the peak resident set (VmHWM of /proc/<pid>/status), reset just before
// the bomb (writing 5 to /proc/<pid>/clear_refs, proc(5)), so no short peak between two samples escapes.

const BOMB = pixelBombPng(12000, 12000);
const MiB = 1024 * 1024;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ctx: Context;
let fake: FakePlatforms;
let dataDir: string;
let api: ApiProcess;
let host: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  db = await createTestDatabase();
  ctx = testContext(db.db);
  fake = startFakePlatforms();
  dataDir = mkdtempSync(join(tmpdir(), "pixel-bomb-"));
  // The host imports come from: 127.0.0.1, HTTPS with a CA the API is told to trust.
  const tls = createTlsFixture();
  writeFileSync(join(dataDir, "ca.pem"), tls.ca);
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tls.cert, key: tls.key },
    fetch: () => new Response(BOMB, { headers: { "content-type": "image/png" } }),
  });
  api = await spawnApi({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    FETCH_ALLOW_HOSTS: `localhost:${host.port}`,
    NODE_EXTRA_CA_CERTS: join(dataDir, "ca.pem"),
    ...fake.env,
  });
});
afterAll(async () => {
  await api?.kill();
  host?.stop(true);
  fake.close();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A figure of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
function procStatus(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) * 1024;
}

/** Asks /healthz every 25 ms until `until` settles; answers each answer's time in ms. */
async function healthzTimes(until: Promise<unknown>): Promise<number[]> {
  let done = false;
  until.finally(() => {
    done = true;
  });
  const times: number[] = [];
  while (!done) {
    const t0 = performance.now();
    const res = await fetch(`${api.url}/healthz`);
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    expect(res.status).toBe(200);
    await Bun.sleep(25);
  }
  return times;
}

describe("a 12000×12000 PNG uploaded, imported, registered and posted to Instagram, against the API as its own process", () => {
  test("refused with 400 VALIDATION_ERROR at each before any decode: /healthz under 200 ms meanwhile, the API's peak memory under 500 MB", async () => {
    // `bun run apps/api` serves in the process it started (no child): its pid is the API's.
    expect(readFileSync(`/proc/${api.proc.pid}/cmdline`, "utf8")).toContain("apps/api");
    const org = await createOrganization(ctx, { name: "Bomb", siteLimit: 5 });
    const user = await createMember(ctx, {
      orgId: org.id,
      email: `${Date.now()}@example.test`,
      role: "owner",
    });
    const { key } = await createApiKey(ctx, {
      orgId: org.id,
      userId: user.id,
      scopes: ["social:write", "content:write", "sites:write"],
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const ig = await call("POST", "/api/v1/social/accounts", {
      platform: "instagram",
      accountId: "ig-bomb",
      accessToken: "tok-instagram-bomb",
    });
    expect(ig.status).toBe(201);
    // A PNG that landed before the limit existed: its bytes in the store, its row ready (as then).
    const oldName = `social-media/${org.id}/old-bomb.png`;
    mkdirSync(dirname(join(dataDir, "objects", oldName)), { recursive: true });
    writeFileSync(join(dataDir, "objects", oldName), BOMB);
    const [old] = await db.db
      .insert(socialMedia)
      .values({
        orgId: org.id,
        key: oldName,
        kind: "image",
        contentType: "image/png",
        size: BOMB.byteLength,
        width: 12000,
        height: 12000,
        source: "upload",
        status: "ready",
        createdAt: new Date(),
      })
      .returning();

    const site = await call("POST", "/api/v1/sites", { name: "Bomb", slug: `bomb-${Date.now()}` });
    expect(site.status).toBe(201);
    const siteId = site.body.site.id as string;
    // A site file that landed before the limit existed, as then.
    const oldSiteKey = `site-media/${siteId}/old-bomb.png`;
    mkdirSync(dirname(join(dataDir, "objects", oldSiteKey)), { recursive: true });
    writeFileSync(join(dataDir, "objects", oldSiteKey), BOMB);
    await db.db.insert(mediaFiles).values({
      siteId,
      key: oldSiteKey,
      name: "old-bomb.png",
      contentType: "image/png",
      size: BOMB.byteLength,
      width: 12000,
      height: 12000,
      source: "upload",
      etag: "old",
      createdAt: new Date(),
    });
    /** A signed upload, then its PUT to the API's own route (local disk), which lands it. */
    const signedPut = async (path: string) => {
      const prep = await call("POST", path, { contentType: "image/png", size: BOMB.byteLength });
      const u = new URL(prep.body.upload.url);
      const res = await fetch(`${api.url}${u.pathname}${u.search}`, {
        method: "PUT",
        headers: prep.body.upload.headers,
        body: new Blob([BOMB]),
      });
      return { prep: prep.body, status: res.status, body: (await res.json()) as Json };
    };

    const pid = api.proc.pid;
    const before = procStatus(pid, "VmRSS");
    writeFileSync(`/proc/${pid}/clear_refs`, "5"); // the peak starts again from the current RSS
    const work = (async () => {
      const sitePut = await signedPut(`/api/v1/sites/${siteId}/media/upload`);
      const imported = await call("POST", `/api/v1/sites/${siteId}/media/import-url`, {
        url: `https://localhost:${host.port}/bomb.png`,
      });
      const registered = await call("POST", "/api/v1/social/media", { url: `/api/media/${oldSiteKey}` });
      const put = await signedPut("/api/v1/social/media/upload");
      const posts = [];
      for (const id of [put.prep.media.id, old!.id])
        posts.push(
          await call("POST", "/api/v1/social/posts", {
            content: "big",
            media: [id],
            accounts: [ig.body.account.id],
          }),
        );
      return { sitePut, imported, registered, put, posts };
    })();
    const times = await healthzTimes(work);
    const { sitePut, imported, registered, put, posts } = await work;
    const peak = procStatus(pid, "VmHWM");
    console.info(
      `pixel bomb: RSS before ${Math.round(before / MiB)} MiB, peak during ${Math.round(peak / MiB)} MiB; ` +
        `/healthz ${times.length} answers, slowest ${Math.round(Math.max(...times))} ms (slowest five: ${[
          ...times,
        ]
          .sort((a, b) => b - a)
          .slice(0, 5)
          .map(Math.round)
          .join(", ")})`,
    );

    expect(peak).toBeLessThan(500 * 1024 * 1024);
    expect(times.length).toBeGreaterThan(0);
    // The bound is 200 ms; one answer of a loaded CI host may stall on the scheduler alone, so
    // nine in ten answers keep it and none may take the seconds that a decode in the API took (1.7–9.3 s).
    const sorted = [...times].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length * 0.9)]!).toBeLessThan(200);
    expect(sorted[sorted.length - 1]!).toBeLessThan(1000);
    for (const refused of [sitePut, imported, registered]) {
      expect([refused.status, refused.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
      expect(refused.body.error.message).toContain("MEDIA_MAX_PIXELS");
    }
    // The social upload lands as refused; the post naming it finds no such file; the old file is refused from its header.
    expect([put.status, put.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(put.body.error.message).toContain("MEDIA_MAX_PIXELS");
    expect([posts[0]!.status, posts[0]!.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect([posts[1]!.status, posts[1]!.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(posts[1]!.body.error.message).toContain("MEDIA_MAX_PIXELS");
  });
});
