import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { createTestDatabase, testServerUrl } from "@site/db/testing";
import { startTcpProxy } from "@site/net/testing";
import { createBullQueue } from "@site/queue";
import { startRenderDaemon } from "@site/render-daemon";
import { openRuntime } from "@site/runtime";
import { openFsStore } from "@site/storage";
import { failingStore } from "@site/storage/testing";
import { buildTestApp, type TestApp } from "../testing/mod.ts";

type Json = any;
const redisUrl = process.env.TEST_REDIS_URL;

describe("GET /healthz and /readyz of the API", () => {
  const target = new URL(testServerUrl());
  const pg = startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const redis = redisUrl
    ? startTcpProxy({ host: new URL(redisUrl).hostname, port: Number(new URL(redisUrl).port || 6379) })
    : null;
  let root: string;
  let store: ReturnType<typeof failingStore>;
  let h: TestApp;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "readyz-"));
    store = failingStore(
      openFsStore({ root, publicBaseUrl: "http://127.0.0.1:3000", secretKey: "test-secret-key-0123456789" }),
      null,
    );
    const queue = redis
      ? createBullQueue({
          redisUrl: redis.via(redisUrl!),
          log: createLogger("silent" as never),
          prefix: `readyz-${Date.now()}`,
          commandTimeoutMs: 400,
        })
      : undefined;
    h = await buildTestApp({
      store,
      queue,
      dbVia: (url) => pg.via(url),
      env: { DB_CONNECT_TIMEOUT_MS: "3000", READY_CHECK_TIMEOUT_MS: "500", RETRY_AFTER_SECONDS: "4" },
    });
  });
  afterAll(async () => {
    pg.setMode("pass");
    redis?.setMode("pass");
    await h.close();
    pg.stop();
    redis?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const readyz = async () => {
    const t0 = performance.now();
    const res = await h.call("GET", "/readyz");
    return { res, body: (await res.json()) as Json, ms: performance.now() - t0 };
  };

  test("200 with each check when the database, the queue and storage are usable", async () => {
    const { res, body } = await readyz();
    expect(res.status).toBe(200);
    expect(body.status).toBe("ready");
    expect(Object.keys(body.checks).sort()).toEqual(["database", "queue", "storage"]);
    for (const c of Object.values(body.checks) as Json[]) expect(c.ok).toBe(true);
  });

  test("/healthz answers 200 at once while the database hangs; /readyz answers 503 naming it within its bound", async () => {
    pg.setMode("refuse");
    await Bun.sleep(100);
    pg.setMode("blackhole");
    await Bun.sleep(1100); // past the reuse window of the last readiness result
    try {
      const t0 = performance.now();
      const live = await h.call("GET", "/healthz");
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: "ok" });
      // "At once" against a database that never answers: well under the readiness bound, with room
      // for a loaded test host (a liveness probe that waited on the database would hang here).
      expect(performance.now() - t0).toBeLessThan(800);
      const { res, body, ms } = await readyz();
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("4");
      expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
      expect(body.error.message).toBe("not ready: database");
      expect(body.error.details.notReady).toEqual(["database"]);
      expect(body.error.details.checks.storage.ok).toBe(true);
      // READY_CHECK_TIMEOUT_MS is 1000: the answer comes at the bound, not at the driver's own timeout.
      expect(ms).toBeLessThan(2500);
    } finally {
      pg.setMode("refuse");
      await Bun.sleep(100);
      pg.setMode("pass");
    }
  });

  test("503 naming storage when it cannot take a write (full disk)", async () => {
    await Bun.sleep(1100);
    store.setFault("ENOSPC");
    try {
      const { res, body } = await readyz();
      expect(res.status).toBe(503);
      expect(body.error.details.notReady).toEqual(["storage"]);
      expect(body.error.details.checks.storage.reason).toBe("full: cannot take writes");
      expect(JSON.stringify(body)).not.toMatch(/ENOSPC|\/srv|\/tmp/);
    } finally {
      store.setFault(null);
    }
    await Bun.sleep(1100);
    expect((await readyz()).res.status).toBe(200);
  });

  test.skipIf(!redisUrl)("503 naming the queue while Redis is down; 200 once it is back", async () => {
    await Bun.sleep(1100);
    redis!.setMode("refuse");
    try {
      const { res, body, ms } = await readyz();
      expect(res.status).toBe(503);
      expect(body.error.details.notReady).toEqual(["queue"]);
      expect(ms).toBeLessThan(1200);
    } finally {
      redis!.setMode("pass");
    }
    await Bun.sleep(1100);
    const again = await readyz();
    expect(again.res.status).toBe(200);
  });
});

describe("the render daemon and the metrics app expose the same pair on their ports", () => {
  test("daemon: /healthz 200; /readyz 503 naming the browser on a host without Chromium", async () => {
    const handle = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "daemon-health-"));
    const rt = await openRuntime({
      config: loadConfig({
        DATABASE_URL: handle.url,
        DATA_DIR: dataDir,
        SECRET_KEY: "test-secret-key-0123456789",
        CHROMIUM_PATH: "/nonexistent/chromium",
        RENDER_METRICS_PORT: "0",
        LOG_LEVEL: "error",
      }),
    });
    // Port 0 picks a free port: read it back from the daemon's /metrics URL.
    const daemon = await startRenderDaemon(rt);
    try {
      const base = daemon.metricsUrl!.replace("0.0.0.0", "127.0.0.1").replace(/\/metrics$/, "");
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as Json;
      expect(body.error.details.notReady).toEqual(["browser"]);
      expect(body.error.details.checks.database.ok).toBe(true);
      expect((await fetch(`${base}/metrics`)).status).toBe(200);
    } finally {
      await daemon.stop();
      await rt.close();
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("metrics app (its own process): /healthz and /readyz on METRICS_HEALTH_PORT; SIGTERM logs that it stopped", async () => {
    const handle = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "metrics-health-"));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const proc = Bun.spawn(["bun", "run", "apps/metrics"], {
      cwd: join(import.meta.dir, "../../.."),
      env: {
        ...process.env,
        DATABASE_URL: handle.url,
        DATA_DIR: dataDir,
        SECRET_KEY: "test-secret-key-0123456789",
        METRICS_HEALTH_PORT: String(port),
        REDIS_URL: "",
        LOG_LEVEL: "info",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      let ready: Response | null = null;
      for (let i = 0; i < 100 && !ready; i++) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
        if (!ready) await Bun.sleep(100);
      }
      expect(ready?.status).toBe(200);
      expect(Object.keys(((await ready!.json()) as Json).checks)).toEqual(["database"]);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      expect(await new Response(proc.stderr).text()).toContain('"msg":"metrics app stopped"');
    } finally {
      proc.kill("SIGKILL");
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
