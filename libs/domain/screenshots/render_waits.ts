import { Type } from "@sinclair/typebox";
import { WORK_ENDED_CHANNEL, watchChannel } from "@site/db";

/** The longest a caller may wait for a render or clip to end (`waitSeconds`), over REST and MCP. */
export const RENDER_WAIT_MAX_S = 25;

/**
 * Every waiter of this process on one LISTEN connection (WORK_ENDED_CHANNEL: renders, clips, campaigns): a waiter arms itself for an id, reads once,
 * and sleeps until that id's notice (or its time) comes; no query per waiter per tick.
 */
export type RenderWaits = {
  /** True while notices reach this process (else waiters poll once a second). */
  readonly live: boolean;
  /** How many waiters sleep now (for tests and metrics). */
  readonly waiting: number;
  /** Arms a wake-up for `id`: `woken` settles at its notice, after `ms`, or on `cancel()`. */
  arm(id: string, ms: number): { woken: Promise<void>; cancel(): void };
  close(): Promise<void>;
};

/** Starts the process's one LISTEN on WORK_ENDED_CHANNEL. */
export function startRenderWaits(databaseUrl: string): RenderWaits {
  const waiting = new Map<string, Set<() => void>>();
  let count = 0;
  const wake = (id: string) => {
    const set = waiting.get(id);
    if (!set) return;
    waiting.delete(id);
    for (const f of set) f();
  };
  const watch = watchChannel(databaseUrl, WORK_ENDED_CHANNEL, {
    onNotify: wake,
    // Back after a gap in which notices may have been missed: everyone reads again.
    onLive: (live) => {
      if (live) for (const id of [...waiting.keys()]) wake(id);
    },
    appName: "site-render-waits",
  });
  return {
    get live() {
      return watch.live;
    },
    get waiting() {
      return count;
    },
    arm(id, ms) {
      let done!: () => void;
      const woken = new Promise<void>((resolve) => {
        let settled = false;
        const timer = setTimeout(() => done(), Math.max(0, ms));
        done = () => {
          if (settled) return;
          settled = true;
          count--;
          clearTimeout(timer);
          waiting.get(id)?.delete(done);
          if (waiting.get(id)?.size === 0) waiting.delete(id);
          resolve();
        };
      });
      count++;
      const set = waiting.get(id) ?? new Set<() => void>();
      waiting.set(id, set);
      set.add(done);
      return { woken, cancel: done };
    },
    async close() {
      for (const id of [...waiting.keys()]) wake(id);
      await watch.close();
    },
  };
}

/**
 * Reads `read()` until `pending` says the work ended or `seconds` passed: armed before each read, so a
 * notice between the read and the sleep is not lost; without `waits` (or while its LISTEN is down) it
 * reads once a second instead.
 */
export async function waitUntilEnded<T>(
  waits: RenderWaits | undefined,
  id: string,
  seconds: number,
  read: () => Promise<T>,
  pending: (v: T) => boolean,
): Promise<T> {
  const until = Date.now() + Math.min(seconds, RENDER_WAIT_MAX_S) * 1000;
  for (;;) {
    const left = until - Date.now();
    const armed = left > 0 && waits?.live ? waits.arm(id, left) : null;
    const v = await read();
    if (!pending(v) || Date.now() >= until) {
      armed?.cancel();
      return v;
    }
    if (armed) await armed.woken;
    else await Bun.sleep(Math.min(1000, Math.max(0, until - Date.now())));
  }
}

/** `?waitSeconds=` of the render and clip reads: wait up to this long for the work to end. */
export const WaitQuery = Type.Object({
  waitSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: RENDER_WAIT_MAX_S,
      description: `wait up to this many seconds (0-${RENDER_WAIT_MAX_S}, default 0) for it to end before answering`,
    }),
  ),
});
