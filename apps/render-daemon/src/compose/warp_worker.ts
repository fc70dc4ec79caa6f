// A warp thread (decision 1508): the still's warp, composite and JPEG encode, off the daemon's main
// thread. It keeps the plates the pool sent it; the pool says which to drop, so both agree on them.
import { encodeFrame, frameBuffer, type Pixels, type PlatePixels, warpComposite } from "./warp.ts";

/** What the pool asks: a frame of `screen` warped onto plate `key` (sent along the first time). */
export type WarpRequest = {
  id: number;
  key: string;
  plate?: PlatePixels;
  /** Plates this thread no longer keeps (the pool's own record of them let them go). */
  drop?: string[];
  screen: Pixels;
  quality: number;
};

/** The frame's JPEG and the thread's own timings, or why it could not be made. */
export type WarpAnswer =
  | { id: number; bytes: Uint8Array; warp: number; encode: number }
  | { id: number; error: string };

declare const self: Worker;

const plates = new Map<string, PlatePixels>();

self.onmessage = async (e: MessageEvent<WarpRequest>) => {
  const m = e.data;
  try {
    for (const key of m.drop ?? []) plates.delete(key);
    if (m.plate) plates.set(m.key, m.plate);
    const plate = plates.get(m.key);
    if (!plate) throw new Error(`plate ${m.key} was not sent to this warp thread`);
    const t0 = performance.now();
    const frame = frameBuffer(plate.width, plate.height);
    warpComposite(plate, m.screen, frame.bytes, frame.offset);
    const t1 = performance.now();
    const bytes = await encodeFrame(frame, m.quality);
    self.postMessage({ id: m.id, bytes, warp: t1 - t0, encode: performance.now() - t1 } satisfies WarpAnswer);
  } catch (err) {
    self.postMessage({
      id: m.id,
      error: err instanceof Error ? err.message : String(err),
    } satisfies WarpAnswer);
  }
};
