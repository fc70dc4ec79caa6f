import type { Context } from "@site/domain/core";
import type { JobQueue } from "@site/queue";

/**
 * Queues one `social-publish` job for a target. The job id names the target, its tries so far and a
 * slot (`now`, a sweep's period, a retry time), so one try is queued once per slot; the target's lease
 * makes any extra job a no-op. A queue that cannot take it is logged, not thrown: the target stays due
 * in the database and the next sweep (here or in another process) queues it (decision 1470); so does a
 * context without a queue.
 */
export async function queuePublish(
  ctx: Context & { queue?: JobQueue },
  targetId: string,
  tries: number,
  slot: string,
  delayMs = 0,
): Promise<void> {
  if (!ctx.queue) return;
  try {
    await ctx.queue.enqueue(
      "social-publish",
      { targetId },
      { jobId: `${targetId}.${tries}.${slot}`, delayMs: Math.max(0, Math.ceil(delayMs)) },
    );
  } catch (err) {
    ctx.log.warn("could not queue a social publication; the sweep will", { targetId, cause: String(err) });
  }
}
