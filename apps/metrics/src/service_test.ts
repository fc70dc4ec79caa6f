import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Queue } from "bullmq";
import IORedis from "ioredis";
import type { DbHandle } from "@site/db";
import { type Context, connectSocialAccount, createOrganization } from "@site/domain";
import { type MetricsTestbed, startMetricsTestbed } from "./testbed.ts";
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

describe("the metrics schedule", () => {
  test("without REDIS_URL: an in-process timer, with a pass at start", async () => {
    const target = await dueTarget();
    const metrics = await startMetrics({ ...base, config: { ...base.config, redisUrl: null } });
    try {
      expect(await waitForSnapshot(target)).toBe(1);
    } finally {
      await metrics.stop();
    }
  });

  test.skipIf(!process.env.TEST_REDIS_URL)(
    "with REDIS_URL: an hourly BullMQ job scheduler, and a catch-up job at start that runs a pass",
    async () => {
      const url = process.env.TEST_REDIS_URL!;
      const queueName = `social-metrics-test-${Date.now().toString(36)}`;
      const target = await dueTarget();
      const metrics = await startMetrics(
        { ...base, config: { ...base.config, redisUrl: url } },
        { queueName },
      );
      const conn = new IORedis(url, { maxRetriesPerRequest: 1 });
      const queue = new Queue(queueName, { connection: conn });
      try {
        expect(await waitForSnapshot(target)).toBe(1);
        const schedulers = await queue.getJobSchedulers();
        expect(schedulers.map((s) => [s.key, Number(s.every)])).toEqual([
          ["social-metrics-hourly", 3_600_000],
        ]);
      } finally {
        await metrics.stop();
        await queue.obliterate({ force: true });
        await queue.close();
        conn.disconnect();
      }
    },
    20_000,
  );
});
