import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Temporary folders owned by a process (an owner file with its pid and start time), so that a sweep can
// tell those a dead process left (SIGKILL, OOM) from those of a live one: Chromium profiles (0461) and
// clip encodes (decision 1422).

const OWNER_FILE = "owner.json";

/** The process that owns a folder: its pid and start time (so a reused pid is not taken for it). */
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

/** Creates a fresh folder `<root>/<prefix><pid>-XXXXXX` owned by this process (its owner file written). */
export function createOwnedDir(prefix: string, root: string = tmpdir()): string {
  const dir = mkdtempSync(join(root, `${prefix}${process.pid}-`));
  const owner: Owner = { pid: process.pid, start: processStart(process.pid) };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(owner));
  return dir;
}

/**
 * Removes the folders `<root>/<prefix>*` whose owner process is gone, calling `beforeRemove` on each
 * first; folders of a live owner (this process included) and folders without an owner file (being created
 * right now, or not ours) are left alone. Returns the folders removed. Linux /proc only.
 */
export function sweepDeadOwnersDirs(
  prefix: string,
  root: string = tmpdir(),
  beforeRemove?: (dir: string) => void,
): string[] {
  const removed: string[] = [];
  if (!existsSync("/proc")) return removed;
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(prefix));
  } catch {
    return removed;
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
    beforeRemove?.(dir);
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
