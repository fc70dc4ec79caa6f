import { readdirSync, readFileSync } from "node:fs";

/** A process as /proc shows it: its parent, the CPU it used in clock ticks (reaped children included), its command line. */
export type ProcessInfo = { pid: number; ppid: number; ticks: number; ownTicks: number; cmdline: string };

/** Every process /proc lists now (those that exit while it is read are left out). */
export function processTable(): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      // after the command name in brackets: state, ppid, …, utime (14), stime, cutime, cstime
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ownTicks = Number(f[11]) + Number(f[12]);
      const cmdline = readFileSync(`/proc/${e}/cmdline`, "utf8");
      table.set(Number(e), {
        pid: Number(e),
        ppid: Number(f[1]),
        ownTicks,
        ticks: ownTicks + Number(f[13]) + Number(f[14]),
        cmdline,
      });
    } catch {}
  }
  return table;
}

/** Whether `pid` descends from `root` in `table`. */
export function descendsFrom(table: Map<number, ProcessInfo>, pid: number, root: number): boolean {
  let p: number | undefined = table.get(pid)?.ppid;
  for (let hops = 0; p && hops < 64; hops++) {
    if (p === root) return true;
    p = table.get(p)?.ppid;
  }
  return false;
}

/**
 * Chromium renderer processes descended from `root` (default: this process), each with the CPU time it
 * has used so far, in clock ticks.
 */
export function rendererProcesses(root = process.pid): Map<number, number> {
  const table = processTable();
  const found = new Map<number, number>();
  for (const p of table.values())
    if (p.cmdline.includes("--type=renderer") && descendsFrom(table, p.pid, root))
      found.set(p.pid, p.ownTicks);
  return found;
}
