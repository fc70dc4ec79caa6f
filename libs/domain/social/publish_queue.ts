import type { Context } from "@site/domain/core";
import type { JobQueue } from "@site/queue";

/**
 * A target still open this long after it fell due gets a job with a new id once per this period: its
 * job was lost or ended without it (a failed claim, a clock that disagreed), decision 1496.
 */
export const RESCUE_MS = 60_000;

/**
 * The slot of a try due at `at`, seen at `now` (decision 1496): the job id names the time the target is
 * due, not when it was queued, so every sweep in every process names the same job. A try has at most
 * one job queued ahead (`t`, delayed to its time), one queued once it is due (`d`: what a sweep or a
 * new post queues; it also covers a delay measured on a clock that disagreed), and one per RESCUE_MS
 * once it is that late (`l`).
 */
export function publishSlot(at: Date, now: Date): string {
  const late = now.getTime() - at.getTime();
  if (late > RESCUE_MS) return `l${Math.floor(now.getTime() / RESCUE_MS)}`;
  return late < 0 ? `t${at.getTime()}` : `d${at.getTime()}`;
}

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
