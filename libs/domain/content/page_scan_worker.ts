/// <reference lib="webworker" />
import type { MediaRefBases } from "@site/domain/media";
import { analyzePage } from "./page_scan.ts";
import { currentThreadId, setThreadNice } from "./thread_priority.ts";

/** The worker side of page_scan_pool.ts: parses one page's MDX per message, off the API's event loop. */
declare const self: Worker;

/** The parser thread's nice value: the API's own thread (0) wins the CPU when both want it. */
const PARSER_NICE = 5;

// This thread's id, so the pool can read its CPU time (/proc/self/task/<tid>/stat); null off Linux.
// The pool also lowers this thread further when a parse runs long (thread_priority.ts).
const tid = currentThreadId();
self.postMessage({ tid });
// Parsing is background work: below the event loop's thread (on Linux, nice is per thread).
if (tid !== null) setThreadNice(tid, PARSER_NICE);

self.onmessage = (event: MessageEvent<{ id: number; content: string; bases: MediaRefBases }>) => {
  const { id, content, bases } = event.data;
  try {
    self.postMessage({ id, scan: analyzePage(content, bases) });
  } catch (e) {
    self.postMessage({ id, failure: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
};
