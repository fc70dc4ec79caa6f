import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DbHandle } from "@site/db";
import { type Context, createOrganization } from "@site/domain/core";
import { connectSocialAccount } from "@site/domain/social";
import { createBullQueue, createMemoryQueue, JOBS } from "@site/queue";
import { Queue } from "bullmq";
import IORedis from "ioredis";
import { type MetricsTestbed, startMetricsTestbed } from "../testing/mod.ts";
import { startMetrics } from "./service.ts";

let handle: DbHandle;
let base: Context;

let bed: MetricsTestbed;
beforeAll(async () => {
  bed = await startMetricsTestbed();
  ({ handle, ctx: base } = bed);
});
afterAll(() => bed.close());

/** A reddit target published two hours ago (so its first stage is due on the real clock). */
async function dueTarget(): Promise<string> {
  const org = await createOrganization(base, { name: "Svc" });
  const principal = { keyId: "k", orgId: org.id, userId: "u", scopes: ["social:write" as const], role: null };
  const { account } = await connectSocialAccount(base, principal, {
    platform: "reddit",
    accountId: `svc${Math.random().toString(36).slice(2, 8)}`,
    accessToken: "tok-svc",
  });
  const at = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const [post] = await handle.sql`insert into social_posts (org_id, content, published_at)
    values (${org.id}, 'svc', ${at}) returning id`;
  const [target] =
    await handle.sql`insert into social_targets (post_id, account_id, platform, platform_post_id, url, status, published_at)
    values (${post!.id}, ${account.id}, 'reddit', 't3_svc', 'https://www.reddit.com/svc', 'published', ${at}) returning id`;
  return target!.id as string;
}

async function waitForSnapshot(targetId: string, deadlineMs = 10_000): Promise<number> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const [row] =
      await handle.sql`select count(*)::int as n from social_snapshots where target_id = ${targetId}`;
    if (row!.n > 0 || Date.now() > until) return row!.n as number;
    await Bun.sleep(50);
  }
}

describe("the metrics schedule (a repeatable job of the libs/queue catalog)", () => {
  test("in-process queue: a pass runs at start, then one per period", async () => {
    const queue = createMemoryQueue({ log: base.log });
    const first = await dueTarget();
    const metrics = await startMetrics({ ...base, queue }, { everyMs: 300 });
    try {
      expect(await waitForSnapshot(first)).toBe(1);
      // A target that becomes due after start is taken by a scheduled pass, not the start-up one.
      const later = await dueTarget();
      expect(await waitForSnapshot(later)).toBe(1);
    } finally {
      await metrics.stop();
      await queue.close();
    }
  });

  test.skipIf(!process.env.TEST_REDIS_URL)(
    "BullMQ: one hourly job scheduler in the catalog's queue, and a catch-up job at start that runs a pass",
    async () => {
      const url = process.env.TEST_REDIS_URL!;
      const prefix = `metrics-test-${Date.now().toString(36)}`;
      const queue = createBullQueue({ redisUrl: url, log: base.log, prefix });
      const target = await dueTarget();
      const metrics = await startMetrics({ ...base, queue });
      // Looked at from outside, as an operator would: the scheduler BullMQ keeps in Redis.
      const conn = new IORedis(url, { maxRetriesPerRequest: 1 });
      const inspect = new Queue(JOBS["collect-social-metrics"].queue, { connection: conn, prefix });
      try {
        expect(await waitForSnapshot(target)).toBe(1);
        const schedulers = await inspect.getJobSchedulers();
        expect(schedulers.map((s) => [s.key, Number(s.every)])).toEqual([
          ["collect-social-metrics", 3_600_000],
        ]);
      } finally {
        await metrics.stop();
        await queue.close();
        await inspect.obliterate({ force: true });
        await inspect.close();
        conn.disconnect();
      }
    },
    20_000,
  );
});
