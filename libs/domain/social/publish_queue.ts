import type { Context } from "@site/domain/core";
import type { JobQueue } from "@site/queue";

/** The slot of a try due at `at`: the job id names the time the target is due, not when it was queued. */
export const dueSlot = (at: Date) => `t${at.getTime()}`;

/**
 * Queues one `social-publish` job for a target. The job id names the target, its tries so far and a
 * slot (the time the try is due, decision 1496), so one try is queued once however many sweeps, in
 * however many processes, see it; the target's lease makes any extra job a no-op. A queue that cannot
 * take it is logged, not thrown: the target stays due in the database and the next sweep (here or in
 * another process) queues it (decision 1470); so does a context without a queue. Answers whether the
 * queue took it.
 */
export async function queuePublish(
  ctx: Context & { queue?: JobQueue },
  targetId: string,
  tries: number,
  slot: string,
  delayMs = 0,
): Promise<boolean> {
  if (!ctx.queue) return false;
  try {
    await ctx.queue.enqueue(
      "social-publish",
      { targetId },
      { jobId: `${targetId}.${tries}.${slot}`, delayMs: Math.max(0, Math.ceil(delayMs)) },
    );
    return true;
  } catch (err) {
    ctx.log.warn("could not queue a social publication; the sweep will", { targetId, cause: String(err) });
    return false;
  }
}
