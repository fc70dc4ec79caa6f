import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import IORedis from "ioredis";
import { createBullQueue } from "./bullmq.ts";
import { createMemoryQueue } from "./memory.ts";
import { HandBackError, type JobQueue, PermanentJobError } from "./queue.ts";

const log = createLogger("silent" as never);
const redisUrl = process.env.TEST_REDIS_URL;
const filePrefix = `qtest-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
let n = 0;

async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const uuid = () => crypto.randomUUID();

const drivers: [string, boolean, () => JobQueue][] = [
  ["in-process", false, () => createMemoryQueue({ log })],
  [
    "bullmq",
    !redisUrl,
    () =>
      createBullQueue({
        redisUrl: redisUrl ?? "",
        log,
        prefix: `${filePrefix}-${n++}`,
        lockDurationMs: 1000,
      }),
  ],
];

for (const [driver, skip, make] of drivers) {
  describe.skipIf(skip)(`render queue conformance: ${driver}`, () => {
    const opened: JobQueue[] = [];
    const open = () => {
      const q = make();
      opened.push(q);
      return q;
    };
    afterEach(async () => {
      for (const q of opened.splice(0)) await q.close();
    });

    test("a queued job runs once with its payload and ends completed", async () => {
      const q = open();
      const id = uuid();
      const seen: unknown[] = [];
      q.consume("render-screenshot", async (job) => {
        seen.push({ id: job.id, data: job.data, attempt: job.attempt });
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(async () => (await q.state("render-screenshot", id)) === "completed");
      expect(seen).toEqual([{ id, data: { renderId: id }, attempt: 1 }]);
    });

    test("enqueueing the same job id twice runs it once", async () => {
      const q = open();
      const id = uuid();
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      expect(await q.depth("render-screenshot")).toBe(1);
      let runs = 0;
      q.consume("render-screenshot", async () => {
        runs++;
      });
      await until(async () => (await q.state("render-screenshot", id)) === "completed");
      expect(runs).toBe(1);
    });

    test("a payload with anything but ids is refused at enqueue", async () => {
      const q = open();
      const id = uuid();
      await expect(
        q.enqueue("render-screenshot", { renderId: id, cookie: "secret" } as never, { jobId: id }),
      ).rejects.toThrow();
      expect(await q.state("render-screenshot", id)).toBe("missing");
    });

    test("a transient failure is retried with backoff and then succeeds", async () => {
      const q = open();
      const id = uuid();
      const attempts: number[] = [];
      q.consume("render-screenshot", async (job) => {
        attempts.push(job.attempt);
        if (job.attempt === 1) throw new Error("flaky");
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(async () => (await q.state("render-screenshot", id)) === "completed");
      expect(attempts).toEqual([1, 2]);
    });

    test("a permanent error fails the job at once, without retries", async () => {
      const q = open();
      const id = uuid();
      let runs = 0;
      q.consume("render-screenshot", async () => {
        runs++;
        throw new PermanentJobError("bad input");
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(async () => (await q.state("render-screenshot", id)) === "failed");
      expect(runs).toBe(1);
    });

    test("depth counts waiting jobs; concurrency caps running ones", async () => {
      const q = open();
      const ids = [uuid(), uuid(), uuid(), uuid()];
      for (const id of ids) await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      expect(await q.depth("render-screenshot")).toBe(4);
      let running = 0;
      let peak = 0;
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      q.consume(
        "render-screenshot",
        async () => {
          running++;
          peak = Math.max(peak, running);
          await gate;
          running--;
        },
        { concurrency: 2 },
      );
      await until(() => running === 2);
      expect(await q.depth("render-screenshot")).toBe(2);
      release();
      await until(async () =>
        (await Promise.all(ids.map((id) => q.state("render-screenshot", id)))).every(
          (s) => s === "completed",
        ),
      );
      expect(peak).toBe(2);
    });

    test("a consumer closed mid-job hands it back, uncounted, and another consumer finishes it", async () => {
      const q = open();
      const id = uuid();
      let startedFirst = false;
      let reason: unknown = null;
      const first = q.consume("render-screenshot", async (job) => {
        startedFirst = true;
        await new Promise((_, reject) =>
          job.signal.addEventListener("abort", () => {
            reason = job.signal.reason;
            reject(job.signal.reason);
          }),
        );
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(() => startedFirst);
      await first.close({ graceMs: 50 });
      expect(reason).toBeInstanceOf(HandBackError);
      // Waiting again at once: no backoff, no attempt used.
      expect(await q.state("render-screenshot", id)).toBe("waiting");
      const seen: number[] = [];
      q.consume("render-screenshot", async (job) => {
        seen.push(job.attempt);
      });
      await until(async () => (await q.state("render-screenshot", id)) === "completed", 15_000);
      expect(seen).toEqual([1]);
    }, 20_000);

    test("a job handed back three times still has all its attempts", async () => {
      const q = open();
      const id = uuid();
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      for (let i = 0; i < 3; i++) {
        let started = false;
        const c = q.consume("render-screenshot", async (job) => {
          started = true;
          await new Promise((_, reject) =>
            job.signal.addEventListener("abort", () => reject(job.signal.reason)),
          );
        });
        await until(() => started);
        await c.close({ graceMs: 20 });
      }
      const attempts: number[] = [];
      q.consume("render-screenshot", async (job) => {
        attempts.push(job.attempt);
        if (job.attempt < 3) throw new Error("flaky");
      });
      await until(async () => (await q.state("render-screenshot", id)) === "completed", 20_000);
      expect(attempts).toEqual([1, 2, 3]);
    }, 30_000);

    test("a finished job can be removed and enqueued again", async () => {
      const q = open();
      const id = uuid();
      let runs = 0;
      q.consume("render-screenshot", async () => {
        runs++;
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(async () => (await q.state("render-screenshot", id)) === "completed");
      await q.remove("render-screenshot", id);
      expect(await q.state("render-screenshot", id)).toBe("missing");
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(() => runs === 2);
    });

    test("a repeatable job runs once per period from its schedule, one at a time", async () => {
      const q = open();
      let runs = 0;
      let running = 0;
      let overlap = false;
      q.consume("collect-social-metrics", async (job) => {
        expect(job.data).toEqual({});
        running++;
        overlap ||= running > 1;
        runs++;
        await new Promise((r) => setTimeout(r, 20));
        running--;
      });
      await q.schedule("collect-social-metrics", { everyMs: 250 });
      await until(() => runs >= 2, 10_000);
      expect(overlap).toBe(false);
      // Starting the schedule again (a second process) does not double it.
      await q.schedule("collect-social-metrics", { everyMs: 250 });
    });

    test("job kinds wait in their own queues: a consumer never takes another kind, ids are per kind", async () => {
      const q = open();
      const id = uuid();
      const seen: string[] = [];
      q.consume("collect-social-metrics", async (job) => {
        seen.push(job.name);
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await q.enqueue("collect-social-metrics", {}, { jobId: id });
      await until(async () => (await q.state("collect-social-metrics", id)) === "completed");
      expect(seen).toEqual(["collect-social-metrics"]);
      expect(await q.state("render-screenshot", id)).toBe("waiting");
      expect(await q.depth("render-screenshot")).toBe(1);
      await expect(q.schedule("render-screenshot")).rejects.toThrow("not a repeatable job");
    });
  });
}

describe.skipIf(!redisUrl)("recurring jobs when Redis loses its data (BullMQ, issue 38, 1441)", () => {
  test("a schedule whose Redis keys vanished (a flush, no reconnection) is created again and runs", async () => {
    const prefix = `${filePrefix}-lost`;
    const q = createBullQueue({ redisUrl: redisUrl as string, log, prefix, lockDurationMs: 1000 });
    const redis = new IORedis(redisUrl as string);
    try {
      let runs = 0;
      q.consume("collect-social-metrics", async () => {
        runs++;
      });
      await q.schedule("collect-social-metrics", { everyMs: 300 });
      await until(() => runs >= 1, 10_000);
      const keys = await redis.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
      const before = runs;
      await until(() => runs >= before + 2, 10_000);
    } finally {
      await q.close();
      redis.disconnect();
    }
  });
});
