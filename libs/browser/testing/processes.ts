import { readdirSync, readFileSync } from "node:fs";

/**
 * Chromium renderer processes descended from `root` (default: this process), each with the CPU time it
 * has used so far, in clock ticks.
 */
export function rendererProcesses(root = process.pid): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {}
  }
  const found = new Map<number, number>();
  const walk = (pid: number) => {
    for (const kid of children.get(pid) ?? []) {
      try {
        if (readFileSync(`/proc/${kid}/cmdline`, "utf8").includes("--type=renderer")) {
          const f = readFileSync(`/proc/${kid}/stat`, "utf8");
          const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
          found.set(kid, Number(fields[11]) + Number(fields[12]));
        }
      } catch {}
      walk(kid);
    }
  };
  walk(root);
  return found;
}
