/// <reference lib="webworker" />
import type { MediaRefBases } from "@site/domain/media";
import { currentThreadId, setThreadNice } from "./thread_priority.ts";

/** The worker side of page_scan_pool.ts: parses one page's MDX per message, off the API's event loop. */
declare const self: Worker;

/** The parser thread's nice value: the API's own thread (0) wins the CPU when both want it. */
const PARSER_NICE = 5;

// Parsing is background work: below the event loop's thread (on Linux, nice is per thread).
const tid = currentThreadId();
if (tid !== null) setThreadNice(tid, PARSER_NICE);
// The parser is loaded after that, so a fresh thread's module loading runs at the parser's priority too.
const parser = import("./page_scan.ts");
// This thread's id, so the pool can read its CPU time (/proc/self/task/<tid>/stat); null off Linux. Said
// once the parser is loaded, so loading is not counted as a parse's CPU time. The pool also lowers this
// thread further when a parse runs long (thread_priority.ts).
parser.then(
  () => self.postMessage({ tid }),
  () => self.postMessage({ tid }),
);

self.onmessage = async (event: MessageEvent<{ id: number; content: string; bases: MediaRefBases }>) => {
  const { id, content, bases } = event.data;
  try {
    const { analyzePage } = await parser;
    self.postMessage({ id, scan: analyzePage(content, bases) });
  } catch (e) {
    self.postMessage({ id, failure: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
};
