import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOwnedDir, sweepDeadOwnersDirs } from "./owned_dirs.ts";

/** Every profile directory of ours starts with this, so a sweep can find those left by a dead process. */
export const PROFILE_PREFIX = "site-chromium-";

/**
 * The profile's preferences, written before launch. WebRTC may send UDP only through a proxy that carries
 * UDP (ours does not), so no UDP leaves the browser and no local address is gathered. The pref is what
 * Chromium 156 honours; its `--force-webrtc-ip-handling-policy` switch had no effect (decision 0461).
 */
export const PROFILE_PREFERENCES = { webrtc: { ip_handling_policy: "disable_non_proxied_udp" } };

/** Creates a fresh profile directory owned by this process (an owner file with pid and start time). */
export function createProfileDir(root: string = tmpdir()): string {
  const dir = createOwnedDir(PROFILE_PREFIX, root);
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
  result.removed = sweepDeadOwnersDirs(PROFILE_PREFIX, root, (dir) => {
    for (const pid of processesUsingProfile(dir)) {
      try {
        process.kill(pid, "SIGKILL");
        result.killed++;
      } catch {}
    }
  }).length;
  return result;
}
