import { type RenderContext, sweepPendingRenders } from "@site/domain";

/** Every `everyMs`, re-enqueues pending renders whose job vanished (see sweepPendingRenders). */
export function startSweeper(ctx: RenderContext, opts: { everyMs?: number; staleMs?: number } = {}) {
  let running: Promise<unknown> | null = null;
  const tick = () => {
    if (running) return;
    running = sweepPendingRenders(ctx, { staleMs: opts.staleMs ?? 5 * 60_000 })
      .then((r) => {
        if (r.requeued || r.failed) ctx.log.info("sweeper pass", r);
      })
      .catch((err) => ctx.log.warn("sweeper pass failed", { cause: String(err) }))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, opts.everyMs ?? 60_000);
  // A first pass at start picks up renders orphaned by a previous process (the in-process queue).
  tick();
  return {
    /** Stops the timer and waits for a pass in flight. */
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
