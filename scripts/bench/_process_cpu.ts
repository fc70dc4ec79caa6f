import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU seconds used so far by this process and each of its descendants, summed by "<browser pid>:<kind>"
 * (Chromium's --type: renderer, gpu-process, utility, zygote; "browser" for its main process) and
 * "self". Reaped children count in their parent (a renderer that ended counts in its zygote).
 */
export function cpuByProcessKind(): Map<string, number> {
  const info = new Map<number, { ppid: number; seconds: number; kind: string }>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8");
      const kind = cmd.match(/--type=([a-z-]+)/)?.[1] ?? (/chrom/i.test(cmd) ? "browser" : "other");
      // utime, stime, and the same of reaped children, in clock ticks (100 per second)
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      info.set(Number(e), { ppid: Number(f[1]), seconds: ticks / 100, kind });
    } catch {}
  }
  const out = new Map<string, number>();
  for (const [pid, i] of info) {
    let p = pid;
    let browser = 0;
    for (let hops = 0; p && p !== process.pid && hops < 64; hops++) {
      const x = info.get(p);
      if (!x) break;
      if (x.kind === "browser") browser = p;
      p = x.ppid;
    }
    if (p !== process.pid) continue;
    const key = pid === process.pid ? "self" : `${browser}:${i.kind}`;
    out.set(key, (out.get(key) ?? 0) + i.seconds);
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
