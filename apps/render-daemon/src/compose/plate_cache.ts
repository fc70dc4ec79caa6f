// Plates: rendered once per look, kept in memory (LRU by bytes) and in the object store (every daemon's).
import type { Logger } from "@site/config";
import type { ObjectStore } from "@site/storage";
import type IORedis from "ioredis";
import type { PlatePixels } from "./warp.ts";

/** Where plates live in the object store: outside `site-media/`, never listed nor counted to a quota. */
export const PLATE_PREFIX = "render-plates/";

const MAGIC = "PLATE01\n";

/** A plate in one buffer: magic, header length, header JSON, then RGB + coverage per pixel, zstd. */
export async function encodePlate(p: PlatePixels): Promise<Uint8Array> {
  const header = new TextEncoder().encode(
    JSON.stringify({ width: p.width, height: p.height, corners: p.corners, bbox: p.bbox }),
  );
  const n = p.width * p.height;
  const raw = new Uint8Array(n * 4);
  for (let i = 0; i < n; i++) {
    raw[i * 4] = p.base[i * 4];
    raw[i * 4 + 1] = p.base[i * 4 + 1];
    raw[i * 4 + 2] = p.base[i * 4 + 2];
    raw[i * 4 + 3] = p.mask[i];
  }
  const body = await Bun.zstdCompress(raw, { level: 3 });
  const out = new Uint8Array(8 + 4 + header.length + body.length);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(8, header.length, true);
  out.set(header, 12);
  out.set(body, 12 + header.length);
  return out;
}

/** Reads a stored plate; throws on anything that is not one. */
export async function decodePlate(bytes: Uint8Array): Promise<PlatePixels> {
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) throw new Error("not a plate");
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + len))) as {
    width: number;
    height: number;
    corners: [number, number][];
    bbox: [number, number, number, number];
  };
  const raw = await Bun.zstdDecompress(bytes.subarray(12 + len));
  return fromPacked(raw, header.width, header.height, header.corners);
}

/** Splits packed RGB + coverage pixels into the warp's plate (alpha 255 base, mask, bbox of the mask). */
export function fromPacked(
  raw: Uint8Array,
  width: number,
  height: number,
  corners: [number, number][],
): PlatePixels {
  const n = width * height;
  if (raw.length !== n * 4) throw new Error("plate pixels do not match its size");
  const base = new Uint8Array(raw);
  const mask = new Uint8Array(n);
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      const a = raw[i * 4 + 3];
      base[i * 4 + 3] = 255;
      if (a === 0) continue;
      mask[i] = a;
      if (x < x0) x0 = x;
      if (x >= x1) x1 = x + 1;
      if (y < y0) y0 = y;
      if (y >= y1) y1 = y + 1;
    }
  }
  if (x1 <= x0) [x0, y0, x1, y1] = [0, 0, 0, 0];
  return { width, height, base, mask, corners, bbox: [x0, y0, x1, y1] };
}

const bytesOf = (p: PlatePixels) => p.base.byteLength + p.mask.byteLength;

/** Counts of where plates came from (for logs and tests). */
export type PlateCacheStats = { memoryHits: number; storeHits: number; built: number; waited: number };

/** The plate cache of one compositor. */
export type PlateCache = {
  /** The plate under `key`: from memory, the object store, or `build` (once across daemons). */
  get(key: string, build: () => Promise<PlatePixels>): Promise<PlatePixels>;
  /** True when memory holds the plate. */
  has(key: string): boolean;
  stats: PlateCacheStats;
};

/**
 * Plates in a memory LRU (at most `maxBytes`), then the object store, then built. Across daemons a
 * build is claimed with a Redis SET NX PX lock: the others wait for the object to appear (or the lock
 * to lapse, then claim it themselves). Without Redis the process builds alone (one build per key in
 * flight). A store or Redis fault costs a local build, never the render.
 */
export function createPlateCache(opts: {
  store?: ObjectStore | null;
  redis?: IORedis | null;
  /** Redis key prefix (the queue's, so test runs stay apart). */
  prefix?: string;
  log: Logger;
  maxBytes?: number;
  /** How long a build may hold the lock; a waiter gives up waiting after it. */
  lockMs?: number;
  pollMs?: number;
}): PlateCache {
  const memory = new Map<string, PlatePixels>();
  const flights = new Map<string, Promise<PlatePixels>>();
  const maxBytes = opts.maxBytes ?? 384 * 1024 * 1024;
  const lockMs = opts.lockMs ?? 120_000;
  const pollMs = opts.pollMs ?? 150;
  const stats: PlateCacheStats = { memoryHits: 0, storeHits: 0, built: 0, waited: 0 };
  let held = 0;

  const remember = (key: string, p: PlatePixels) => {
    if (memory.has(key)) held -= bytesOf(memory.get(key) as PlatePixels);
    memory.delete(key);
    memory.set(key, p);
    held += bytesOf(p);
    while (held > maxBytes && memory.size > 1) {
      const oldest = memory.keys().next().value as string;
      held -= bytesOf(memory.get(oldest) as PlatePixels);
      memory.delete(oldest);
    }
  };

  const objectKey = (key: string) => `${PLATE_PREFIX}${key}.plate`;

  const load = async (key: string): Promise<PlatePixels | null> => {
    if (!opts.store) return null;
    try {
      const obj = await opts.store.get(objectKey(key));
      if (!obj) return null;
      return await decodePlate(new Uint8Array(await new Response(obj.body).arrayBuffer()));
    } catch (err) {
      opts.log.warn("stored plate unreadable; building it", { key, cause: String(err) });
      return null;
    }
  };

  const save = async (key: string, p: PlatePixels) => {
    if (!opts.store) return;
    try {
      await opts.store.put(objectKey(key), await encodePlate(p), { contentType: "application/octet-stream" });
    } catch (err) {
      opts.log.warn("could not store a plate", { key, cause: String(err) });
    }
  };

  const lockKey = (key: string) => `${opts.prefix ?? ""}plate-lock:${key}`;
  const claim = async (key: string, token: string): Promise<boolean> => {
    if (!opts.redis) return true;
    try {
      return (await opts.redis.set(lockKey(key), token, "PX", lockMs, "NX")) === "OK";
    } catch (err) {
      opts.log.warn("plate lock unavailable; building without it", { cause: String(err) });
      return true;
    }
  };
  const release = async (key: string, token: string) => {
    if (!opts.redis) return;
    await opts.redis
      .eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        1,
        lockKey(key),
        token,
      )
      .catch(() => {});
  };
  const lockHeld = async (key: string) => {
    try {
      return (await opts.redis?.exists(lockKey(key))) === 1;
    } catch {
      return false;
    }
  };

  const fetchOrBuild = async (key: string, build: () => Promise<PlatePixels>): Promise<PlatePixels> => {
    const stored = await load(key);
    if (stored) {
      stats.storeHits++;
      return stored;
    }
    const token = crypto.randomUUID();
    const giveUpAt = Date.now() + lockMs;
    let waited = false;
    while (!(await claim(key, token))) {
      // another daemon builds it: wait for its object (or for its lock to lapse)
      if (!waited) stats.waited++;
      waited = true;
      await Bun.sleep(pollMs);
      if (opts.store && (await opts.store.head(objectKey(key)).catch(() => null))) {
        const p = await load(key);
        if (p) {
          stats.storeHits++;
          return p;
        }
      }
      if (Date.now() > giveUpAt) break;
      if (!(await lockHeld(key))) {
        const p = await load(key);
        if (p) {
          stats.storeHits++;
          return p;
        }
      }
    }
    try {
      // the holder may have finished between our look and our claim
      if (waited) {
        const p = await load(key);
        if (p) {
          stats.storeHits++;
          return p;
        }
      }
      const p = await build();
      stats.built++;
      await save(key, p);
      return p;
    } finally {
      await release(key, token);
    }
  };

  return {
    stats,
    has: (key) => memory.has(key),
    async get(key, build) {
      const hit = memory.get(key);
      if (hit) {
        stats.memoryHits++;
        memory.delete(key);
        memory.set(key, hit);
        return hit;
      }
      let flight = flights.get(key);
      if (!flight) {
        flight = fetchOrBuild(key, build).then((p) => {
          remember(key, p);
          return p;
        });
        flights.set(key, flight);
        flight.then(
          () => flights.delete(key),
          () => flights.delete(key),
        );
      }
      return flight;
    },
  };
}
