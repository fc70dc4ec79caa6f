import { readFileSync, readlinkSync } from "node:fs";
import { setPriority } from "node:os";

/**
 * Scheduling priority of single threads (Linux): the page parser pool lowers a worker thread whose parse
 * runs long to nice 19, so everything else on the machine (other organizations' parses, the API's event
 * loop, PostgreSQL) preempts it (decision 0612). On Linux `setpriority(PRIO_PROCESS, tid, nice)` applies
 * to that one thread; raising nice needs no privilege, lowering it back does, so a lowered thread is
 * retired once its parse ends and a fresh one (inheriting the main thread's nice) takes its place.
 *
 * The thread id comes from `syscall(SYS_gettid)` and setpriority is called in libc, both through bun:ffi;
 * /proc/thread-self and node:os setPriority stand behind them. Where neither works (not Linux, no ffi,
 * no /proc) the functions answer null/false and the pool keeps its old behaviour; that is logged once.
 */

type Libc = {
  gettid: () => number;
  setpriority: (tid: number, nice: number) => number;
};
const PRIO_PROCESS = 0;

/** SYS_gettid by architecture (x86_64 and aarch64; others fall back to /proc/thread-self). */
const SYS_GETTID: Partial<Record<string, number>> = { x64: 186, arm64: 178 };

let libc: Libc | null | undefined;
function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  const gettid = SYS_GETTID[process.arch];
  if (process.platform !== "linux" || gettid === undefined) return null;
  try {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const { symbols } = dlopen("libc.so.6", {
      syscall: { args: [FFIType.i64], returns: FFIType.i64 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    libc = {
      gettid: () => Number(symbols.syscall(gettid)),
      setpriority: (tid, nice) => symbols.setpriority(PRIO_PROCESS, tid, nice),
    };
  } catch {}
  return libc;
}

let warned = false;
function warnOnce(what: string): void {
  if (warned) return;
  warned = true;
  console.warn(`thread priority: ${what}; long page parses keep their priority (decision 0612)`);
}

/** The kernel id of the calling thread, or null where it cannot be known (not Linux). */
export function currentThreadId(): number | null {
  const tid = loadLibc()?.gettid();
  if (tid && tid > 0) return tid;
  try {
    return Number(readlinkSync("/proc/thread-self").split("/").pop()) || null;
  } catch {
    return null;
  }
}

/** Field `n` (1-based, as in proc(5)) of /proc/self/task/<tid>/stat as a number, or null. */
function statField(tid: number, n: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // Fields after "(comm)" start at field 3.
    const value = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n - 3]);
    return Number.isInteger(value) ? value : null;
  } catch {
    return null;
  }
}

/** The nice value of a thread of this process (field 19 of /proc/self/task/<tid>/stat), or null. */
export function threadNice(tid: number): number | null {
  return statField(tid, 19);
}

/**
 * Sets the nice value of one thread of this process (`tid` from currentThreadId). Only raising it (to
 * lower the priority) works without privileges. Answers whether the thread now has that nice value.
 */
export function setThreadNice(tid: number, nice: number): boolean {
  let done = loadLibc()?.setpriority(tid, nice) === 0;
  if (!done) {
    try {
      setPriority(tid, nice);
      done = true;
    } catch {}
  }
  // Read back where /proc tells; otherwise the call's own answer.
  const now = threadNice(tid);
  const ok = now === null ? done : now === nice;
  if (!ok) warnOnce(`could not set thread ${tid} to nice ${nice}`);
  return ok;
}
