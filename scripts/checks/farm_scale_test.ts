import { describe, expect, test } from "bun:test";
import { pgbouncerMissing } from "@site/db/testing";
import { startRenderDaemon } from "@site/render-daemon";
import { createStubPipeline } from "@site/render-daemon/testing";
import type { Runtime } from "@site/runtime";
import { DEFAULTS, runFarmScale } from "../bench/farm_scale.ts";

// Issue 35: the farm scale bench's correctness checks, small enough for CI (the figures come from
// `bun scripts/bench/farm_scale.ts --workers 1,10,30`). Real processes: the API and three render daemons
// (stub filmer, decision 1503) behind a PgBouncer in transaction mode whose pool (3) is smaller than the
// number of processes, on a role limited to 8 connections: every render done, charged, filmed and
// stored exactly once, and never more server connections than the pool.
const missing =
  pgbouncerMissing() ??
  (Bun.which("redis-server") ? null : "no redis-server (the bench runs a Redis of its own)");
if (missing) console.warn(`farm_scale_test skipped: ${missing}`);

describe("the farm scale bench, small", () => {
  test.skipIf(missing !== null)(
    "3 daemons, 5 organizations, a pool of 3: every render once, within the pool",
    async () => {
      const r = await runFarmScale({
        ...DEFAULTS,
        workers: 3,
        orgs: 5,
        rendersPerOrg: 3,
        poolSize: 3,
        connLimit: 8,
        filmMs: 50,
        timeoutMs: 60_000,
      });
      expect(r.failures).toEqual([]);
      expect(r.renders).toBe(15);
      expect(r.serverConnections.poolerServersMax).toBeGreaterThan(0);
      expect(r.serverConnections.poolerServersMax).toBeLessThanOrEqual(3);
      expect(r.serverConnections.roleMax).toBeLessThanOrEqual(8);
      // Every organization got renders done by half-time: none waited behind the others' backlog.
      expect(r.fairness.jainAtHalf).toBeGreaterThan(0.5);
    },
    120_000,
  );

  test("the stub pipeline is a test hook: refused with NODE_ENV=production", async () => {
    const was = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      await expect(startRenderDaemon({} as Runtime, { pipeline: createStubPipeline() })).rejects.toThrow(
        /test hook: refused with NODE_ENV=production/,
      );
    } finally {
      process.env.NODE_ENV = was;
    }
  });
});
