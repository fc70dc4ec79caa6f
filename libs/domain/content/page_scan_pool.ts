import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { AppError } from "@site/domain/core";
import type { MediaRefBases } from "@site/domain/media";
import type { PageScan } from "./page_scan.ts";
import { setThreadNice, threadNice } from "./thread_priority.ts";

/**
 * Page MDX is parsed in worker threads, never on the API's event loop: a parse holds a worker, not the
 * server, and one that runs past its budget is stopped by terminating the worker. The budget is CPU
 * time of the worker's thread (read from /proc), so a busy machine does not turn an ordinary page into
 * a refused one; a wall-clock cap stands behind it (and alone where /proc is not there). Results are
 * cached by content (public reads sign from the cache; a write warms it).
 *
 * Parsing is shared fairly between organizations (decision 0612): each parse belongs to a tenant (the
 * organization of the site); a tenant runs at most PAGE_SCAN_TENANT_RUNNING parses at once, so at least
 * one worker is always left to the others, and waiting parses are taken round-robin by tenant. A write
 * finding PAGE_SCAN_TENANT_WAITING parses of its tenant already waiting is refused (429 with
 * Retry-After) — that tenant only; reads wait their turn.
 */

/** The CPU time one page may take to parse (512 KiB of ordinary MDX takes about 1.6 s here). */
export const PAGE_SCAN_CPU_MS = 4_000;
/** The wall-clock cap on one parse, whatever the CPU budget says. */
export const PAGE_SCAN_WALL_MS = 60_000;
const POLL_MS = 50;
/**
 * CPU time after which a parse's thread is lowered to the lowest priority (nice 19, thread_priority.ts):
 * everything else on the machine (other organizations' parses, the API's event loop, PostgreSQL) then
 * preempts it, so a long parse takes only CPU nobody else wants. Pages up to about 50 KB parse within
 * it (about 300 ms per 100 KB); a lowered thread is replaced by a fresh one after its parse.
 */
export const PAGE_SCAN_DEMOTE_CPU_MS = 150;
const DEMOTED_NICE = 19;
/** Parses waiting for a worker (all tenants) beyond which a new write is refused (429 RATE_LIMITED). */
export const PAGE_SCAN_QUEUE_MAX = 64;
/** Parser threads: two at least (one is always left to other tenants), one per spare core, at most 4. */
export const PAGE_SCAN_WORKERS = Math.max(2, Math.min(4, availableParallelism() - 1));
/** Parses one tenant may run at once: all workers but one. */
export const PAGE_SCAN_TENANT_RUNNING = Math.max(1, PAGE_SCAN_WORKERS - 1);
/** Parses of one tenant that may wait for a worker; a write beyond them is refused for that tenant. */
export const PAGE_SCAN_TENANT_WAITING = 4;
/** Retry-After of a refused write: a running parse ends within its CPU budget. */
export const PAGE_SCAN_RETRY_AFTER_S = Math.ceil(PAGE_SCAN_CPU_MS / 1000);
const CACHE_ENTRIES = 2_000;
/** The cache's size bound, in characters of sanitized content plus about 200 per reference. */
const CACHE_COST_MAX = 32 * 1024 * 1024;

/** Why a parse did not give a scan. */
export type ScanFailure = { kind: "deadline" | "busy" | "crash"; message: string };

type Job = {
  tenant: string;
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
  /** Whether the thread was lowered to DEMOTED_NICE (it cannot be raised again: retired after its job). */
  demoted: boolean;
};

const slots: Slot[] = Array.from({ length: PAGE_SCAN_WORKERS }, () => ({
  worker: null,
  tid: null,
  job: null,
  id: 0,
  timer: null,
  demoted: false,
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
/** Waiting parses by tenant, in the round-robin order tenants are served (a Map keeps insertion order). */
const waiting = new Map<string, Job[]>();
let waitingCount = 0;
/** Parses running by tenant. */
const running = new Map<string, number>();

/**
 * The next job to run: the first tenant in turn with a job waiting and a running parse to spare; that
 * tenant goes to the back of the line.
 */
function take(): Job | null {
  for (const [tenant, jobs] of waiting) {
    if ((running.get(tenant) ?? 0) >= PAGE_SCAN_TENANT_RUNNING) continue;
    const job = jobs.shift()!;
    waiting.delete(tenant);
    if (jobs.length > 0) waiting.set(tenant, jobs);
    waitingCount--;
    running.set(tenant, (running.get(tenant) ?? 0) + 1);
    return job;
  }
  return null;
}

/**
 * Gives every idle worker a job, as long as there is one it may take; `freed` (the worker that just
 * finished) first, so a tenant whose parse ended goes on where it was and the other workers stay warm.
 * Every parser thread is started at the first job, so none starts while a write waits for it.
 */
function pump(freed?: Slot): void {
  for (const slot of slots) slot.worker ??= spawn(slot);
  for (const slot of freed ? [freed, ...slots.filter((s) => s !== freed)] : slots) {
    if (slot.job !== null) continue;
    const job = take();
    if (!job) return;
    start(slot, job);
  }
}
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
  if (job) {
    const n = (running.get(job.tenant) ?? 1) - 1;
    if (n > 0) running.set(job.tenant, n);
    else running.delete(job.tenant);
  }
  return job;
}

function retire(slot: Slot): void {
  slot.worker?.terminate();
  slot.worker = null;
  slot.tid = null;
  slot.demoted = false;
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
    // A lowered thread cannot be raised again: the next parse gets a fresh one.
    if (slot.demoted) retire(slot);
    if (event.data.scan) job?.resolve(event.data.scan);
    else job?.reject({ kind: "crash", message: event.data.failure ?? "the parser failed" });
    pump(slot);
  };
  worker.onerror = (event) => {
    if (slot.worker !== worker) return;
    retire(slot);
    finish(slot)?.reject({ kind: "crash", message: event.message || "the parser stopped" });
    pump(slot);
  };
  return worker;
}

function start(slot: Slot, job: Job): void {
  slot.job = job;
  slot.id++;
  slot.worker ??= spawn(slot);
  const started = performance.now();
  let cpuStart: number | null = null;
  const stop = (message: string) => {
    retire(slot);
    finish(slot)?.reject({ kind: "deadline", message });
    pump(slot);
  };
  slot.timer = setInterval(() => {
    const cpu = slot.tid !== null ? threadCpuMs(slot.tid) : null;
    if (cpu !== null) {
      cpuStart ??= cpu;
      if (!slot.demoted && cpu - cpuStart > PAGE_SCAN_DEMOTE_CPU_MS && slot.tid !== null) {
        // Retired after its parse even where lowering failed: the thread's nice is then unknown.
        slot.demoted = true;
        // Not SCHED_IDLE: measured worse (decision 0612), a lock held by such a thread waits for an idle CPU.
        setThreadNice(slot.tid, DEMOTED_NICE);
      }
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

/**
 * The parser threads as they are now (diagnostics and tests): kernel thread id (null before the thread
 * said it, or off Linux), nice value, whether it is parsing and whether it was lowered for a long parse.
 */
export function pageScanThreads(): {
  tid: number | null;
  nice: number | null;
  busy: boolean;
  demoted: boolean;
}[] {
  return slots.map((s) => ({
    tid: s.tid,
    nice: s.tid === null ? null : threadNice(s.tid),
    busy: s.job !== null,
    demoted: s.demoted,
  }));
}

/** The refusal of a write for a tenant over its share, or null while it may queue one more parse. */
function overShare(tenant: string): ScanFailure | null {
  const mine = waiting.get(tenant)?.length ?? 0;
  if (mine >= PAGE_SCAN_TENANT_WAITING)
    return {
      kind: "busy",
      message: `this organization already has ${(running.get(tenant) ?? 0) + mine} page writes being parsed; retry in ${PAGE_SCAN_RETRY_AFTER_S} s`,
    };
  if (waitingCount >= PAGE_SCAN_QUEUE_MAX)
    return {
      kind: "busy",
      message: `too many pages are being parsed; retry in ${PAGE_SCAN_RETRY_AFTER_S} s`,
    };
  return null;
}

/**
 * Refuses a page write of `tenant` before anything else is done for it (its body is not even read) while
 * the tenant is over its share of the parser pool: 429 RATE_LIMITED with Retry-After. A flood of refused
 * writes then costs the API almost nothing, so other tenants' writes keep their usual time.
 */
export function admitPageWrite(tenant: string): void {
  const refused = overShare(tenant);
  if (refused) throw scanFailureError(refused);
}

function run(
  tenant: string,
  content: string,
  bases: MediaRefBases,
  refuseWhenBusy: boolean,
): Promise<PageScan> {
  return new Promise((resolve, reject) => {
    const refused = refuseWhenBusy ? overShare(tenant) : null;
    if (refused) {
      reject(refused);
      return;
    }
    const mine = waiting.get(tenant);
    const job = { tenant, content, bases, resolve, reject };
    if (mine) mine.push(job);
    else waiting.set(tenant, [job]);
    waitingCount++;
    pump();
  });
}

function cacheKey(content: string, bases: MediaRefBases): string {
  return createHash("sha256")
    .update(`${bases.publicBaseUrl}\n${bases.legacyPrefixes.join("\n")}\n\n`)
    .update(content)
    .digest("base64");
}

/**
 * The media scan of page MDX (page_scan.ts), parsed in a worker and cached by content. `tenant` (the
 * site's organization; "" when none is known) is whose share of the pool the parse uses. Rejects with a
 * ScanFailure when the parse ran past its budget (PAGE_SCAN_CPU_MS, PAGE_SCAN_WALL_MS), the worker
 * failed, or (writes: `refuseWhenBusy`) PAGE_SCAN_TENANT_WAITING parses of the tenant, or
 * PAGE_SCAN_QUEUE_MAX in all, are already waiting; reads wait their turn.
 */
export function scanPage(
  content: string,
  bases: MediaRefBases,
  opts: { refuseWhenBusy?: boolean; tenant?: string } = {},
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
  const p = run(opts.tenant ?? "", content, bases, opts.refuseWhenBusy ?? false).then(
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

/** A ScanFailure as the error a write answers: 429 with Retry-After when busy, else 400 naming the content. */
export function scanFailureError(failure: ScanFailure): AppError {
  if (failure.kind === "busy")
    return new AppError(
      "RATE_LIMITED",
      `content: ${failure.message}`,
      { retryAfterSeconds: PAGE_SCAN_RETRY_AFTER_S },
      { "retry-after": String(PAGE_SCAN_RETRY_AFTER_S) },
    );
  const message = failure.kind === "deadline" ? failure.message : "could not be parsed";
  return new AppError("VALIDATION_ERROR", `content: ${message}`, [{ field: "content", message }]);
}

/** Whether a rejection of scanPage is a ScanFailure (anything else is a bug to rethrow). */
export function isScanFailure(e: unknown): e is ScanFailure {
  return typeof e === "object" && e !== null && "kind" in e && "message" in e && !(e instanceof Error);
}
