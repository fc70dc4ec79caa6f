// Warp threads for stills (decision 1508): the daemon's main thread hands a frame's warp, composite
// and JPEG encode to one of a few Bun Workers, so that two renders' composes run side by side and
// neither holds up the films' DevTools traffic, the API or the database on the main thread.
import type { Pixels, PlatePixels } from "./warp.ts";
import type { WarpAnswer, WarpRequest } from "./warp_worker.ts";

/** Plates each thread keeps (≈ 6.5 MB each at 1440×900): the looks a host frames most, per thread. */
const PLATES_PER_THREAD = 4;

export type WarpPool = {
  /** The frame of `screen` warped onto the plate `key`, JPEG at `quality`, and the thread's timings. */
  frame(
    key: string,
    plate: PlatePixels,
    screen: Pixels,
    quality: number,
  ): Promise<{ bytes: Uint8Array; warp: number; encode: number }>;
  close(): void;
};

type Pending = {
  resolve: (a: { bytes: Uint8Array; warp: number; encode: number }) => void;
  reject: (e: Error) => void;
};
type Thread = { worker: Worker; plates: string[]; pending: Map<number, Pending> };

/** Starts `size` warp threads (at least one); each warms its warp and encoder on a small frame. */
export function createWarpPool(size: number): WarpPool {
  let seq = 0;
  let closed = false;
  const threads: Thread[] = [];

  const start = (): Thread => {
    const t: Thread = {
      worker: new Worker(new URL("./warp_worker.ts", import.meta.url).href),
      plates: [],
      pending: new Map(),
    };
    t.worker.onmessage = (e: MessageEvent<WarpAnswer>) => {
      const a = e.data;
      const p = t.pending.get(a.id);
      if (!p) return;
      t.pending.delete(a.id);
      if ("error" in a) p.reject(new Error(`warp thread: ${a.error}`));
      else p.resolve({ bytes: a.bytes, warp: a.warp, encode: a.encode });
    };
    // A thread that died takes its frames with it (they fail and are retried as any fault) and is
    // replaced by a fresh one that holds no plate.
    t.worker.onerror = (e) => {
      e.preventDefault?.();
      fail(t, new Error(`warp thread failed: ${e.message}`));
    };
    return t;
  };

  const fail = (t: Thread, err: Error) => {
    for (const p of t.pending.values()) p.reject(err);
    t.pending.clear();
    t.worker.terminate();
    const i = threads.indexOf(t);
    if (i >= 0 && !closed) threads[i] = start();
  };

  const send = (t: Thread, req: WarpRequest) =>
    new Promise<{ bytes: Uint8Array; warp: number; encode: number }>((resolve, reject) => {
      // a frame that failed may have left this side's record of the thread's plates wrong: sent again next time
      const forget = (err: Error) => {
        t.plates = t.plates.filter((k) => k !== req.key);
        reject(err);
      };
      t.pending.set(req.id, { resolve, reject: forget });
      try {
        t.worker.postMessage(req);
      } catch (err) {
        t.pending.delete(req.id);
        forget(err instanceof Error ? err : new Error(String(err)));
      }
    });

  for (let i = 0; i < Math.max(1, size); i++) threads.push(start());
  // each thread's first frame compiles the warp loop and loads the encoder: a small one, at start
  const tiny = 64;
  const warmPlate: PlatePixels = {
    width: tiny,
    height: tiny,
    base: new Uint8Array(tiny * tiny * 4).fill(255),
    mask: new Uint8Array(tiny * tiny).fill(255),
    corners: [
      [8, 8],
      [56, 10],
      [54, 56],
      [10, 54],
    ],
    bbox: [0, 0, tiny, tiny],
  };
  const warmScreen: Pixels = { data: new Uint8Array(32 * 32 * 4).fill(128), width: 32, height: 32 };
  for (const t of threads)
    send(t, { id: ++seq, key: "", plate: warmPlate, screen: warmScreen, quality: 90 }).catch(() => {});

  return {
    frame(key, plate, screen, quality) {
      if (closed) return Promise.reject(new Error("the compositor is closed"));
      // the least busy thread; of those, one that holds the plate already
      let best = threads[0];
      for (const t of threads) {
        const has = t.plates.includes(key);
        const bestHas = best.plates.includes(key);
        if (t.pending.size < best.pending.size || (t.pending.size === best.pending.size && has && !bestHas))
          best = t;
      }
      const req: WarpRequest = { id: ++seq, key, screen, quality };
      const at = best.plates.indexOf(key);
      if (at >= 0) best.plates.splice(at, 1);
      else {
        req.plate = plate;
        if (best.plates.length >= PLATES_PER_THREAD)
          req.drop = best.plates.splice(0, best.plates.length - PLATES_PER_THREAD + 1);
      }
      best.plates.push(key);
      return send(best, req);
    },
    close() {
      closed = true;
      for (const t of threads) {
        for (const p of t.pending.values()) p.reject(new Error("the compositor is closed"));
        t.pending.clear();
        t.worker.terminate();
      }
    },
  };
}
