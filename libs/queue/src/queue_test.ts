import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { createBullQueue } from "./bullmq.ts";
import { createMemoryQueue } from "./memory.ts";
import { PermanentJobError, type RenderQueue } from "./queue.ts";

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

const drivers: [string, boolean, () => RenderQueue][] = [
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
    const opened: RenderQueue[] = [];
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
      await until(async () => (await q.state(id)) === "completed");
      expect(seen).toEqual([{ id, data: { renderId: id }, attempt: 1 }]);
    });

    test("enqueueing the same job id twice runs it once", async () => {
      const q = open();
      const id = uuid();
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      expect(await q.depth()).toBe(1);
      let runs = 0;
      q.consume("render-screenshot", async () => {
        runs++;
      });
      await until(async () => (await q.state(id)) === "completed");
      expect(runs).toBe(1);
    });

    test("a payload with anything but ids is refused at enqueue", async () => {
      const q = open();
      const id = uuid();
      await expect(
        q.enqueue("render-screenshot", { renderId: id, cookie: "secret" } as never, { jobId: id }),
      ).rejects.toThrow();
      expect(await q.state(id)).toBe("missing");
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
      await until(async () => (await q.state(id)) === "completed");
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
      await until(async () => (await q.state(id)) === "failed");
      expect(runs).toBe(1);
    });

    test("depth counts waiting jobs; concurrency caps running ones", async () => {
      const q = open();
      const ids = [uuid(), uuid(), uuid(), uuid()];
      for (const id of ids) await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      expect(await q.depth()).toBe(4);
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
      expect(await q.depth()).toBe(2);
      release();
      await until(async () =>
        (await Promise.all(ids.map((id) => q.state(id)))).every((s) => s === "completed"),
      );
      expect(peak).toBe(2);
    });

    test("a consumer closed mid-job hands it back and another consumer finishes it", async () => {
      const q = open();
      const id = uuid();
      let startedFirst = false;
      const first = q.consume("render-screenshot", async (job) => {
        startedFirst = true;
        await new Promise((_, reject) =>
          job.signal.addEventListener("abort", () => reject(job.signal.reason)),
        );
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(() => startedFirst);
      await first.close({ graceMs: 50 });
      let finishedBy = "";
      q.consume("render-screenshot", async () => {
        finishedBy = "second";
      });
      await until(async () => (await q.state(id)) === "completed", 15_000);
      expect(finishedBy).toBe("second");
    }, 20_000);

    test("a finished job can be removed and enqueued again", async () => {
      const q = open();
      const id = uuid();
      let runs = 0;
      q.consume("render-screenshot", async () => {
        runs++;
      });
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(async () => (await q.state(id)) === "completed");
      await q.remove(id);
      expect(await q.state(id)).toBe("missing");
      await q.enqueue("render-screenshot", { renderId: id }, { jobId: id });
      await until(() => runs === 2);
    });
  });
}
