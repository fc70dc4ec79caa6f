import { afterAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { creditLedger, mediaFiles, organizations, screenshotRenders } from "@site/db";
import { pidsMentioning } from "@site/db/testing";
import { createBullQueue } from "@site/queue";
import { openFsStore } from "@site/storage";
import { and, eq } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

const redisUrl = process.env.TEST_REDIS_URL;
const SECRET = "test-secret-key-0123456789";
const LOCK_MS = 2000;

describe.skipIf(!redisUrl)("a render daemon killed mid-render (BullMQ on real Redis)", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test("another daemon finishes its job, and nothing is charged twice", async () => {
    // The first film of /slow hangs, so the first daemon is surely mid-render when it is killed.
    let firstHit = true;
    const pages = servePages({
      "/slow": async () => {
        if (firstHit) {
          firstHit = false;
          await new Promise(() => {});
        }
        return html(LANDING);
      },
    });
    cleanup.push(() => pages.stop());
    const dataDir = mkdtempSync(join(tmpdir(), "render-kill-"));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const prefix = `killtest-${Date.now().toString(36)}`;
    const log = createLogger("silent" as never);
    const queue = createBullQueue({ redisUrl: redisUrl as string, log, prefix, lockDurationMs: LOCK_MS });
    const env = { SECRET_KEY: SECRET, DATA_DIR: dataDir, FETCH_ALLOW_HOSTS: pages.host };
    // Daemon A's Chromium profiles live under this folder, so they can be found and killed with it.
    const tmpA = join(dataDir, "tmp-a");
    mkdirSync(tmpA);
    const store = openFsStore({
      root: join(dataDir, "objects"),
      publicBaseUrl: "http://127.0.0.1:3000",
      secretKey: SECRET,
      maxPutBytes: 10485760,
    });
    const h: TestApp = await buildTestApp({ env, queue, store });
    cleanup.push(() => h.close());

    // Daemon A: a real process (and its Chromium) in a process group of its own.
    const a: ChildProcess = spawn("bun", ["apps/render-daemon/src/main.ts"], {
      cwd: join(import.meta.dir, "../../.."),
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        ...env,
        DATABASE_URL: h.databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        RENDER_JOB_LOCK_MS: String(LOCK_MS),
        RENDER_CONCURRENCY: "1",
        LOG_LEVEL: "info",
        TMPDIR: tmpA,
      },
    });
    let stderr = "";
    a.stderr?.on("data", (d) => {
      stderr += String(d);
    });
    // SIGKILL the daemon and everything it started (puppeteer puts Chromium in a group of its own).
    const killA = () => {
      for (const pid of [-(a.pid as number), ...pidsMentioning(tmpA)]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    };
    cleanup.push(killA);
    await until(async () => stderr.includes("render daemon taking jobs"), 30_000);

    const org = await h.seedOrg({ credits: 30 });
    const site = await h.call("POST", "/api/v1/sites", {
      key: org.key,
      body: { name: "K", slug: `k-${Date.now()}` },
    });
    const siteId = ((await site.json()) as { site: { id: string } }).site.id;
    const res = await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot`, {
      key: org.key,
      body: { url: pages.url("/slow") },
    });
    expect(res.status).toBe(202);
    const { renderId } = (await res.json()) as { renderId: string };

    await until(async () => (pages.hits.get("/slow") ?? 0) >= 1, 30_000);
    killA();
    await until(async () => a.exitCode !== null || a.signalCode !== null, 10_000);
    expect(a.signalCode).toBe("SIGKILL");
    const [mid] = await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, renderId));
    expect(mid.status).toBe("pending");

    // Daemon B picks the stalled job up once A's lock lapses.
    const b: RenderDaemon = await startRenderDaemon(runtimeOf(h), { sweepEveryMs: 3_600_000 });
    cleanup.push(() => b.stop());
    const done = await until(async () => {
      const [r] = await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, renderId));
      return r.status === "pending" ? null : r;
    }, 60_000);
    expect(done.status).toBe("done");
    expect(done.attempts).toBe(2);

    const [o] = await h.db.select().from(organizations).where(eq(organizations.id, org.org.id));
    expect(o.credits).toBe(20);
    const ledger = await h.db.select().from(creditLedger).where(eq(creditLedger.orgId, org.org.id));
    expect(ledger.filter((l) => l.reason !== "grant").map((l) => [l.reason, l.delta])).toEqual([
      ["screenshot_debit", -10],
    ]);
    const files = await h.db
      .select()
      .from(mediaFiles)
      .where(and(eq(mediaFiles.siteId, siteId), eq(mediaFiles.source, "screenshot")));
    expect(files).toHaveLength(1);
  }, 120_000);
});
