import { processTable } from "@site/browser/testing";

/**
 * CPU seconds used so far by this process and each of its descendants, summed by "<browser pid>:<kind>"
 * (Chromium's --type: renderer, gpu-process, utility, zygote; "browser" for its main process) and
 * "self". Reaped children count in their parent (a renderer that ended counts in its zygote).
 */
export function cpuByProcessKind(): Map<string, number> {
  const table = processTable();
  const kindOf = (cmd: string) =>
    cmd.match(/--type=([a-z-]+)/)?.[1] ?? (/chrom/i.test(cmd) ? "browser" : "other");
  const out = new Map<string, number>();
  for (const [pid, i] of table) {
    let p = pid;
    let browser = 0;
    for (let hops = 0; p && p !== process.pid && hops < 64; hops++) {
      const x = table.get(p);
      if (!x) break;
      if (kindOf(x.cmdline) === "browser") browser = p;
      p = x.ppid;
    }
    if (p !== process.pid) continue;
    const key = pid === process.pid ? "self" : `${browser}:${kindOf(i.cmdline)}`;
    // utime, stime, and the same of reaped children, in clock ticks (100 per second)
    out.set(key, (out.get(key) ?? 0) + i.ticks / 100);
  }
  return out;
}

/** What each key used between two readings, largest first (keys under 50 ms left out). */
export function cpuUsedSince(before: Map<string, number>, after = cpuByProcessKind()): [string, number][] {
  return [...after]
    .map(([k, v]): [string, number] => [k, v - (before.get(k) ?? 0)])
    .filter(([, v]) => v > 0.05)
    .sort((a, b) => b[1] - a[1]);
}

/**
 * CPU seconds used so far by the processes whose command line starts with `name` (all of them, with
 * the children they reaped): the machine's PostgreSQL, which shares this host's cores in a bench but
 * runs elsewhere on a farm.
 */
export function cpuOfCommand(name: string): number {
  let ticks = 0;
  for (const [, i] of processTable()) if (i.cmdline.startsWith(name)) ticks += i.ticks;
  return ticks / 100;
}
