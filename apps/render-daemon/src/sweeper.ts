import { type RenderContext, sweepPendingRenders, takeSweepTurn } from "@site/domain/screenshots";

/**
 * Every `everyMs` (RENDER_SWEEP_EVERY_MS, 5 s), checks that each render in progress still has its job, by
 * job id, and admits waiting renders a lost admission left behind (see sweepPendingRenders, 0472). The
 * first pass runs at start and looks at every render in progress, however recent: with the in-process
 * queue nothing but this process can be running them, so a crash leaves nothing pending (issue 18.4).
 * A pass that fails (the database slow to take a connection on a busy host) is tried again after a
 * second, with the same reach, instead of waiting for the next period. With BullMQ (a queue the whole
 * farm shares) a periodic pass runs on one host per period only: the one that takes the farm's sweep
 * turn (decision 1506); the pass at start always runs.
 */
export function startSweeper(
  ctx: RenderContext,
  opts: { everyMs?: number; staleMs?: number; onRefunded?: (n: number) => void } = {},
) {
  let running: Promise<unknown> | null = null;
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  const everyMs = opts.everyMs ?? ctx.config.renderSweepEveryMs;
  const holder = `${process.pid}:${crypto.randomUUID()}`;
  const shared = ctx.queue.driver === "bullmq";
  const tick = (staleMs = opts.staleMs, always = false) => {
    if (running) return;
    running = (async () => {
      if (!always && shared && !(await takeSweepTurn(ctx, everyMs, holder))) return null;
      return sweepPendingRenders(ctx, { staleMs });
    })()
      .then((r) => {
        if (!r) return;
        if (r.requeued || r.failed || r.admitted) ctx.log.info("sweeper pass", r);
        // A render the sweeper fails (tried too often) is refunded with it.
        if (r.failed) opts.onRefunded?.(r.failed);
      })
      .catch((err) => {
        ctx.log.warn("sweeper pass failed; trying again shortly", { cause: err });
        if (stopped || retry) return;
        retry = setTimeout(
          () => {
            retry = null;
            if (!stopped) tick(staleMs, true);
          },
          Math.min(1000, everyMs),
        );
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(() => tick(), everyMs);
  tick(0, true);
  return {
    /** Stops the timer and waits for a pass in flight. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (retry) clearTimeout(retry);
      await running;
    },
    /** Resolves when the pass in flight (the start pass, right after start) has ended. */
    async settled() {
      await running;
    },
  };
}
