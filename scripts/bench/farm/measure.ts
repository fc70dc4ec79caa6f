// Small measurements of the farm bench: percentiles, Redis command counts, CPU time, bytes on disk.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function redisCommandStats(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** Redis calls between two INFO commandstats readings, INFO itself left out. */
export function sumCalls(a: Record<string, number>, b: Record<string, number>): number {
  return Object.entries(b).reduce((s, [k, v]) => (k === "info" ? s : s + v - (a[k] ?? 0)), 0);
}

/** CPU seconds a process has used (utime + stime), 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

export function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}
