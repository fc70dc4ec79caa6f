import { readdirSync, readFileSync } from "node:fs";

/** Children of process `parent` whose command line contains `marker` (Linux: read from /proc). */
export function childrenWith(parent: number, marker: string): number[] {
  const found: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent && readFileSync(`/proc/${e}/cmdline`, "utf8").includes(marker))
        found.push(Number(e));
    } catch {
      // The process ended between the listing and the read: not a child any more.
    }
  }
  return found;
}
