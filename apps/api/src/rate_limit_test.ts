import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { startTcpProxy } from "@site/net/testing";
import { createRedisRateLimiter } from "@site/runtime";
import { buildTestApp, spawnApi } from "../testing/mod.ts";

type Json = any;
const redisUrl = process.env.TEST_REDIS_URL;
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open) await o.close();
});

describe("per-key request rate limits", () => {
  test("off by default: 150 keyed requests in a burst, none refused, no RateLimit headers", async () => {
    const h = await buildTestApp();
    open.push(h);
    const { key } = await h.seedOrg();
    const statuses = await Promise.all(
      Array.from({ length: 150 }, () => h.call("GET", "/api/v1/sites", { key }).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect((await h.call("GET", "/api/v1/sites", { key })).headers.get("ratelimit-limit")).toBeNull();
  });

  test("in process: past RATE_LIMIT_REQUESTS a key gets 429 RATE_LIMITED with Retry-After and RateLimit-*; other keys do not", async () => {
    const h = await buildTestApp({ env: { RATE_LIMIT_REQUESTS: "5", RATE_LIMIT_WINDOW_MS: "60000" } });
    open.push(h);
    const a = await h.seedOrg();
    const b = await h.seedOrg();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await h.call("GET", "/api/v1/sites", { key: a.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("ratelimit-remaining")!);
    }
    expect(remaining.map(Number)).toEqual([...remaining.map(Number)].sort((x, y) => y - x));
    expect(Number(remaining.at(-1))).toBe(0);
    const over = await h.call("GET", "/api/v1/sites", { key: a.key });
    expect(over.status).toBe(429);
    const body = (await over.json()) as Json;
    expect(body.error.code).toBe("RATE_LIMITED");
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(over.headers.get("ratelimit-limit")).toBe("5");
    expect(over.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(over.headers.get("ratelimit-reset"))).toBe(retry);
    expect(over.headers.get("ratelimit-policy")).toBe("5;w=60");
    expect((await h.call("GET", "/api/v1/sites", { key: b.key })).status).toBe(200);
    // A bad key is refused for what it is, before any counting.
    expect((await h.call("GET", "/api/v1/sites", { key: "sk_nope" })).status).toBe(401);
  });

  test.skipIf(!redisUrl)(
    "shared through Redis: two API processes on one database grant a key RATE_LIMIT_REQUESTS in all",
    async () => {
      const env = {
        REDIS_URL: redisUrl!,
        RATE_LIMIT_REQUESTS: "8",
        RATE_LIMIT_WINDOW_MS: "60000",
        QUEUE_PREFIX: `rl-${Date.now().toString(36)}`,
      };
      const h = await buildTestApp({ env });
      open.push(h);
      const other = await spawnApi({ ...env, DATABASE_URL: h.databaseUrl });
      open.push({ close: () => other.kill() });
      const { key } = await h.seedOrg();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const viaA = i % 2 === 0;
        const res = viaA
          ? await h.call("GET", "/api/v1/sites", { key })
          : await fetch(`${other.url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } });
        statuses.push(res.status);
      }
      expect(statuses).toEqual(Array(8).fill(200));
      const a = await h.call("GET", "/api/v1/sites", { key });
      const b = await fetch(`${other.url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } });
      expect([a.status, b.status]).toEqual([429, 429]);
      expect(Number(b.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(((await b.json()) as Json).error.code).toBe("RATE_LIMITED");
    },
  );

  test.skipIf(!redisUrl)(
    "a limiter asked the moment it is made waits for its connection: the first requests are counted",
    async () => {
      const limiter = createRedisRateLimiter({
        redisUrl: redisUrl!,
        requests: 2,
        windowMs: 60_000,
        prefix: `rl-fresh-${Date.now().toString(36)}`,
        log: createLogger("silent" as never),
      });
      try {
        const taken = await Promise.all([limiter.take("k"), limiter.take("k"), limiter.take("k")]);
        expect(taken.map((d) => d.allowed).sort()).toEqual([false, true, true]);
        expect((await limiter.take("k")).allowed).toBe(false);
      } finally {
        await limiter.close();
      }
    },
  );

  test.skipIf(!redisUrl)(
    "Redis down: the limiter lets requests through at once instead of failing them",
    async () => {
      const u = new URL(redisUrl!);
      const proxy = startTcpProxy({ host: u.hostname, port: Number(u.port || 6379) });
      const limiter = createRedisRateLimiter({
        redisUrl: proxy.via(redisUrl!),
        requests: 2,
        windowMs: 60_000,
        prefix: `rl-down-${Date.now().toString(36)}`,
        timeoutMs: 300,
        log: createLogger("silent" as never),
      });
      try {
        await Bun.sleep(100);
        expect((await limiter.take("k")).allowed).toBe(true);
        proxy.setMode("refuse");
        const t0 = performance.now();
        for (let i = 0; i < 5; i++) expect((await limiter.take("k")).allowed).toBe(true);
        expect(performance.now() - t0).toBeLessThan(1000);
      } finally {
        await limiter.close();
        proxy.stop();
      }
    },
  );
});
