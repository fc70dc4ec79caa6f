import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { AppError } from "@site/domain/core";
import type { MediaRefBases } from "@site/domain/media";
import type { PageScan } from "./page_scan.ts";

/**
 * Page MDX is parsed in worker threads, never on the API's event loop: a parse holds a worker, not the
 * server, and one that runs past its budget is stopped by terminating the worker. The budget is CPU
 * time of the worker's thread (read from /proc), so a busy machine does not turn an ordinary page into
 * a refused one; a wall-clock cap stands behind it (and alone where /proc is not there). Results are
 * cached by content (public reads sign from the cache; a write warms it).
 */

/** The CPU time one page may take to parse (512 KiB of ordinary MDX takes about 1.6 s here). */
export const PAGE_SCAN_CPU_MS = 4_000;
/** The wall-clock cap on one parse, whatever the CPU budget says. */
export const PAGE_SCAN_WALL_MS = 60_000;
const POLL_MS = 100;
/** Parses waiting for a worker beyond which a new one is refused (429 RATE_LIMITED). */
export const PAGE_SCAN_QUEUE_MAX = 64;
const CACHE_ENTRIES = 2_000;
/** The cache's size bound, in characters of sanitized content plus about 200 per reference. */
const CACHE_COST_MAX = 32 * 1024 * 1024;

/** Why a parse did not give a scan. */
export type ScanFailure = { kind: "deadline" | "busy" | "crash"; message: string };

type Job = {
  content: string;
  bases: MediaRefBases;
  resolve: (scan: PageScan) => void;
  reject: (failure: ScanFailure) => void;
};
type Slot = {
  worker: Worker | null;
  /** The worker's thread id once it said it, for its CPU time. */
  tid: number | null;
  job: Job | null;
  id: number;
  timer: ReturnType<typeof setInterval> | null;
};

const WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));
const slots: Slot[] = Array.from({ length: WORKERS }, () => ({
  worker: null,
  tid: null,
  job: null,
  id: 0,
  timer: null,
}));

/** CPU time (user + system) of one thread of this process in ms, or null where /proc cannot tell. */
function threadCpuMs(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime (fields 14 and 15 of stat), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
const queue: Job[] = [];
const cache = new Map<string, PageScan>();
let cacheCost = 0;
const costOf = (scan: PageScan) =>
  scan.ok ? (scan.safeContent?.length ?? 0) + 200 * (scan.refs.length + (scan.safeRefs?.length ?? 0)) : 100;

function remember(key: string, scan: PageScan): void {
  cache.set(key, scan);
  cacheCost += costOf(scan);
  while (cache.size > CACHE_ENTRIES || (cacheCost > CACHE_COST_MAX && cache.size > 1)) {
    const oldest = cache.keys().next().value!;
    cacheCost -= costOf(cache.get(oldest)!);
    cache.delete(oldest);
  }
}
const inFlight = new Map<string, Promise<PageScan>>();
// Content that ran past the deadline once is not parsed again (a stored page is read many times).
const timedOut = new Map<string, ScanFailure>();

function finish(slot: Slot): Job | null {
  const job = slot.job;
  slot.job = null;
  if (slot.timer) clearInterval(slot.timer);
  slot.timer = null;
  return job;
}

function retire(slot: Slot): void {
  slot.worker?.terminate();
  slot.worker = null;
  slot.tid = null;
}

function spawn(slot: Slot): Worker {
  const worker = new Worker(new URL("./page_scan_worker.ts", import.meta.url).href);
  // Idle parsers do not keep the process alive (Bun and Node workers have unref).
  (worker as Worker & { unref?: () => void }).unref?.();
  worker.onmessage = (
    event: MessageEvent<{ id?: number; tid?: number | null; scan?: PageScan; failure?: string }>,
  ) => {
    if (slot.worker !== worker) return;
    if (event.data.id === undefined) {
      slot.tid = event.data.tid ?? null;
      return;
    }
    if (event.data.id !== slot.id) return;
    const job = finish(slot);
    if (event.data.scan) job?.resolve(event.data.scan);
    else job?.reject({ kind: "crash", message: event.data.failure ?? "the parser failed" });
    next(slot);
  };
  worker.onerror = (event) => {
    if (slot.worker !== worker) return;
    retire(slot);
    finish(slot)?.reject({ kind: "crash", message: event.message || "the parser stopped" });
    next(slot);
  };
  return worker;
}

function next(slot: Slot): void {
  const job = queue.shift();
  if (!job) return;
  slot.job = job;
  slot.id++;
  slot.worker ??= spawn(slot);
  const started = performance.now();
  let cpuStart: number | null = null;
  const stop = (message: string) => {
    retire(slot);
    finish(slot)?.reject({ kind: "deadline", message });
    next(slot);
  };
  slot.timer = setInterval(() => {
    const cpu = slot.tid !== null ? threadCpuMs(slot.tid) : null;
    if (cpu !== null) {
      cpuStart ??= cpu;
      if (cpu - cpuStart > PAGE_SCAN_CPU_MS)
        return stop(
          `not parsed within ${PAGE_SCAN_CPU_MS / 1000} s of CPU time (nesting too deep or too many constructs)`,
        );
    }
    if (performance.now() - started > PAGE_SCAN_WALL_MS)
      stop(`not parsed within ${PAGE_SCAN_WALL_MS / 1000} s (the server is busy or the content too complex)`);
  }, POLL_MS);
  slot.worker.postMessage({ id: slot.id, content: job.content, bases: job.bases });
}

function run(content: string, bases: MediaRefBases, refuseWhenBusy: boolean): Promise<PageScan> {
  return new Promise((resolve, reject) => {
    if (refuseWhenBusy && queue.length >= PAGE_SCAN_QUEUE_MAX) {
      reject({
        kind: "busy",
        message: "too many pages are being parsed; retry shortly",
      } satisfies ScanFailure);
      return;
    }
    queue.push({ content, bases, resolve, reject });
    const idle = slots.find((s) => s.job === null);
    if (idle) next(idle);
  });
}

function cacheKey(content: string, bases: MediaRefBases): string {
  return createHash("sha256")
    .update(`${bases.publicBaseUrl}\n${bases.legacyPrefixes.join("\n")}\n\n`)
    .update(content)
    .digest("base64");
}

/**
 * The media scan of page MDX (page_scan.ts), parsed in a worker and cached by content. Rejects with a
 * ScanFailure when the parse ran past its budget (PAGE_SCAN_CPU_MS, PAGE_SCAN_WALL_MS), the worker failed, or (writes:
 * `refuseWhenBusy`) PAGE_SCAN_QUEUE_MAX parses are already waiting; reads wait their turn.
 */
export function scanPage(
  content: string,
  bases: MediaRefBases,
  opts: { refuseWhenBusy?: boolean } = {},
): Promise<PageScan> {
  const key = cacheKey(content, bases);
  const hit = cache.get(key);
  if (hit) {
    // Most recently used last.
    cache.delete(key);
    cache.set(key, hit);
    return Promise.resolve(hit);
  }
  const failed = timedOut.get(key);
  if (failed) return Promise.reject(failed);
  const pending = inFlight.get(key);
  if (pending) return pending;
  const p = run(content, bases, opts.refuseWhenBusy ?? false).then(
    (scan) => {
      inFlight.delete(key);
      remember(key, scan);
      return scan;
    },
    (failure: ScanFailure) => {
      inFlight.delete(key);
      if (failure.kind === "deadline") {
        timedOut.set(key, failure);
        if (timedOut.size > CACHE_ENTRIES) timedOut.delete(timedOut.keys().next().value!);
      }
      throw failure;
    },
  );
  inFlight.set(key, p);
  return p;
}

/** A ScanFailure as the error a write answers: 429 when busy, else 400 naming the content. */
export function scanFailureError(failure: ScanFailure): AppError {
  if (failure.kind === "busy") return new AppError("RATE_LIMITED", `content: ${failure.message}`);
  const message = failure.kind === "deadline" ? failure.message : "could not be parsed";
  return new AppError("VALIDATION_ERROR", `content: ${message}`, [{ field: "content", message }]);
}

/** Whether a rejection of scanPage is a ScanFailure (anything else is a bug to rethrow). */
export function isScanFailure(e: unknown): e is ScanFailure {
  return typeof e === "object" && e !== null && "kind" in e && "message" in e && !(e instanceof Error);
}
