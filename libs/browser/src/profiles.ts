import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Every profile directory of ours starts with this, so a sweep can find those left by a dead process. */
export const PROFILE_PREFIX = "site-chromium-";
const OWNER_FILE = "owner.json";

/** The process that owns a profile: its pid and start time (so a reused pid is not taken for it). */
type Owner = { pid: number; start: string | null };

/** A process's start time in clock ticks since boot (/proc/<pid>/stat, field 22); null when unknown. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const start = processStart(owner.pid);
  return owner.start === null || start === null || start === owner.start;
}

/**
 * The profile's preferences, written before launch. WebRTC may send UDP only through a proxy that carries
 * UDP (ours does not), so no UDP leaves the browser and no local address is gathered. The pref is what
 * Chromium 156 honours; its `--force-webrtc-ip-handling-policy` switch had no effect (decision 0461).
 */
export const PROFILE_PREFERENCES = { webrtc: { ip_handling_policy: "disable_non_proxied_udp" } };

/** Creates a fresh profile directory owned by this process (an owner file with pid and start time). */
export function createProfileDir(root: string = tmpdir()): string {
  const dir = mkdtempSync(join(root, `${PROFILE_PREFIX}${process.pid}-`));
  const owner: Owner = { pid: process.pid, start: processStart(process.pid) };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(owner));
  mkdirSync(join(dir, "Default"));
  writeFileSync(join(dir, "Default", "Preferences"), JSON.stringify(PROFILE_PREFERENCES));
  return dir;
}

/** Pids whose command line names `--user-data-dir=<dir>` (the browser and its helpers); Linux /proc only. */
export function processesUsingProfile(dir: string): number[] {
  const flag = `--user-data-dir=${dir}`;
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return pids;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (args.includes(flag)) pids.push(Number(name));
    } catch {}
  }
  return pids;
}

/** What a sweep did. */
export type SweepResult = { killed: number; removed: number };

/**
 * Kills the browsers of profiles whose owner process is gone (a daemon that was SIGKILLed, or crashed)
 * and removes those profiles. Profiles of a live owner, this process included, are left alone.
 */
export function sweepOrphanBrowsers(root: string = tmpdir()): SweepResult {
  const result: SweepResult = { killed: 0, removed: 0 };
  if (!existsSync("/proc")) return result;
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(PROFILE_PREFIX));
  } catch {
    return result;
  }
  for (const name of names) {
    const dir = join(root, name);
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")) as Owner;
      if (!Number.isInteger(owner.pid)) continue;
    } catch {
      continue; // being created right now, or not ours: left alone
    }
    if (isAlive(owner)) continue;
    for (const pid of processesUsingProfile(dir)) {
      try {
        process.kill(pid, "SIGKILL");
        result.killed++;
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
    result.removed++;
  }
  return result;
}
