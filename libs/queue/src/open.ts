import type { Logger } from "@site/config";
import { createBullQueue } from "./bullmq.ts";
import { createMemoryQueue } from "./memory.ts";
import type { JobQueue } from "./queue.ts";

/** BullMQ when a Redis URL is set, otherwise the in-process queue. */
export function openJobQueue(opts: {
  redisUrl: string | null;
  log: Logger;
  prefix?: string;
  lockDurationMs?: number;
  commandTimeoutMs?: number;
}): JobQueue {
  if (!opts.redisUrl) return createMemoryQueue({ log: opts.log });
  return createBullQueue({ ...opts, redisUrl: opts.redisUrl });
}
