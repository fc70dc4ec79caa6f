// The render bench's memory sampler, on a thread of its own (decision 1509): reading every process's
// smaps_rollup takes tens of milliseconds, which on the bench's main thread stalled the daemon's event
// loop in the middle of the renders it was timing (and never during the bare shots).
import { readFileSync } from "node:fs";
import { descendsFrom, processTable } from "@site/browser/testing";

/** Sent by the bench: start or stop sampling, pids whose process trees are not counted, or read the peaks. */
export type SamplerMessage = { sampling?: boolean; exclude?: number[]; read?: true };
export type SamplerPeaks = { peakTree: number; peakSelf: number };

declare const self: Worker;

const root = process.pid;
let sampling = true;
let exclude: number[] = [];
let peakTree = 0;
let peakSelf = 0;

/** Proportional set size (shared pages split fairly) of the bench process and its descendants, less `exclude`'s trees. */
function treePss(): number {
  const table = processTable();
  let total = 0;
  for (const pid of table.keys()) {
    if (pid !== root && !descendsFrom(table, pid, root)) continue;
    if (exclude.some((x) => pid === x || descendsFrom(table, pid, x))) continue;
    try {
      const pss = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
      total += pss ? Number(pss[1]) * 1024 : 0;
    } catch {}
  }
  return total;
}

setInterval(() => {
  if (!sampling) return;
  peakTree = Math.max(peakTree, treePss());
  peakSelf = Math.max(peakSelf, process.memoryUsage.rss());
}, 500);

self.onmessage = (e: MessageEvent<SamplerMessage>) => {
  if (e.data.sampling !== undefined) sampling = e.data.sampling;
  if (e.data.exclude) exclude = e.data.exclude;
  if (e.data.read) self.postMessage({ peakTree, peakSelf } satisfies SamplerPeaks);
};
