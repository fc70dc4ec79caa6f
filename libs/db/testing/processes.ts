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

/** Pids of processes whose command line mentions `marker` (a killed process's Chromium, by its temp folder). */
export function pidsMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended between the listing and the read: nothing to find in it
    }
  }
  return pids;
}

/** A free loopback port (taken by a server of Bun's and given back at once). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port as number;
  s.stop(true);
  return p;
}

/**
 * A test child (`bun <script>` from `cwd`, with `env` over this process's environment) and `ready`,
 * which settles once it printed `readyLine` on stdout (rejects when it exits first). Its stderr is this
 * process's; the test kills it (SIGKILL for a crash, SIGTERM for a stop) and awaits `proc.exited`.
 */
export function spawnChild(
  script: string,
  opts: { cwd: string; env: Record<string, string | undefined>; readyLine?: string },
): { proc: Bun.Subprocess<"ignore", "pipe", "inherit">; ready: Promise<void> } {
  const readyLine = opts.readyLine ?? "ready";
  const proc = Bun.spawn(["bun", script], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const ready = (async () => {
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes(readyLine)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`${script} exited before "${readyLine}": ${out}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
  })();
  return { proc, ready };
}
