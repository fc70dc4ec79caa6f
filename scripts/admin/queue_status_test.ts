import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { createLogger } from "@site/config";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import { createBullQueue, PermanentJobError } from "@site/queue";

const ROOT = new URL("../..", import.meta.url).pathname;
const redisUrl = process.env.TEST_REDIS_URL;
let db: DbHandle;
beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
});
afterAll(() => db.close());

async function admin(env: Record<string, string>, ...args: string[]) {
  const proc = Bun.spawn(["bun", "scripts/admin.ts", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      SECRET_KEY: "queue-status-secret-0123456789",
      LOG_LEVEL: "error",
      REDIS_URL: "",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`admin ${args.join(" ")}: ${stderr}`);
  return JSON.parse(stdout);
}

/** Resolves when `check` passes, or fails after `ms`. */
async function until(check: () => Promise<boolean>, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(50);
  }
}

describe("bun run admin queue:status", () => {
  test("in process: counts from the database, no daemon when no server runs", async () => {
    const out = await admin({}, "queue:status");
    expect(out).toMatchObject({ driver: "memory", depth: expect.any(Number), active: expect.any(Number) });
    expect(out.failed).toBeGreaterThanOrEqual(0);
    expect(out.daemons).toEqual([]);
  });

  test.skipIf(!redisUrl)(
    "on BullMQ: depth, active, failed and the daemons seen, from Redis",
    async () => {
      const prefix = `qs-${Date.now()}`;
      const queue = createBullQueue({ redisUrl: redisUrl!, log: createLogger("error"), prefix });
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const bad = randomUUID();
      const consumer = queue.consume(
        "render-screenshot",
        async (job) => {
          if (job.data.renderId === bad) throw new PermanentJobError("bad input");
          await held;
        },
        { concurrency: 1 },
      );
      try {
        await queue.enqueue("render-screenshot", { renderId: bad }, { jobId: bad });
        await until(async () => (await queue.state("render-screenshot", bad)) === "failed");
        const busy = randomUUID();
        await queue.enqueue("render-screenshot", { renderId: busy }, { jobId: busy });
        await until(async () => (await queue.state("render-screenshot", busy)) === "active");
        for (let i = 0; i < 2; i++) {
          const id = randomUUID();
          await queue.enqueue("render-screenshot", { renderId: id }, { jobId: id });
        }
        const out = await admin({ REDIS_URL: redisUrl!, QUEUE_PREFIX: prefix }, "queue:status");
        expect(out).toMatchObject({ driver: "bullmq", depth: 2, waiting: 2, active: 1, failed: 1 });
        expect(out.daemons.map((d: { name: string }) => d.name)).toContain(`${hostname()}:${process.pid}`);
      } finally {
        release();
        await consumer.close({ graceMs: 2000 });
        await queue.close();
      }
    },
    30_000,
  );
});
