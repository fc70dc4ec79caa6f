import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { currentThreadId, setThreadNice, threadNice } from "./thread_priority.ts";

// Decision 0612: a long page parse lowers its own worker thread, and only that thread, to nice 19.

const linux = process.platform === "linux";
let worker: Worker | null = null;
afterEach(() => {
  worker?.terminate();
  worker = null;
});

/** A worker thread that says its own id (as thread_priority.ts sees it from inside) and idles. */
function threadOfWorker(): Promise<number> {
  const module = new URL("./thread_priority.ts", import.meta.url).href;
  // The message handler keeps the worker (and its thread) alive until it is terminated.
  const code = `self.onmessage = () => {};
import(${JSON.stringify(module)}).then((m) => self.postMessage(m.currentThreadId()));`;
  worker = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
  return new Promise((resolve) => {
    worker!.onmessage = (event: MessageEvent<number>) => resolve(event.data);
  });
}

describe.if(linux)("thread priority", () => {
  test("the main thread's id is the process id; a worker thread has an id of its own under /proc/self/task", async () => {
    expect(currentThreadId()).toBe(process.pid);
    const tid = await threadOfWorker();
    expect(tid).not.toBe(process.pid);
    expect(existsSync(`/proc/self/task/${tid}/stat`)).toBe(true);
  });

  test("setThreadNice lowers that one thread to nice 19 (read back from /proc/self/task/<tid>/stat); the main thread keeps its nice", async () => {
    const mainNice = threadNice(process.pid);
    expect(mainNice).not.toBeNull();
    const tid = await threadOfWorker();
    expect(threadNice(tid)).toBe(mainNice!);
    expect(setThreadNice(tid, 19)).toBe(true);
    expect(threadNice(tid)).toBe(19);
    expect(threadNice(process.pid)).toBe(mainNice!);
  });

  test("a new thread starts at the main thread's nice, whatever an earlier worker was set to", async () => {
    const first = await threadOfWorker();
    setThreadNice(first, 19);
    worker!.terminate();
    const second = await threadOfWorker();
    expect(second).not.toBe(first);
    expect(threadNice(second)).toBe(threadNice(process.pid)!);
  });
});
