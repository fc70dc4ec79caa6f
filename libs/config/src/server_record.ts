import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawSetting } from "./read_setting.ts";

/** What a running API server records in DATA_DIR, so the CLI and scripts on this machine find it. */
export type ServerRecord = {
  /** The base clients use (PUBLIC_BASE_URL, or the listening address). */
  publicBaseUrl: string;
  /** Where the server listens. */
  url: string;
  pid: number;
  startedAt: string;
};

const FILE = "api.json";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Records the server's public base in `DATA_DIR/api.json` (as the embedded database records its URL in
 * pg.json). Best effort: a read-only DATA_DIR (a container without one) only loses the record.
 */
export function recordServer(dataDir: string, server: { publicBaseUrl: string; url: string }): boolean {
  try {
    mkdirSync(dataDir, { recursive: true });
    const record: ServerRecord = { ...server, pid: process.pid, startedAt: new Date().toISOString() };
    const tmp = join(dataDir, `${FILE}.${process.pid}`);
    writeFileSync(tmp, `${JSON.stringify(record)}\n`);
    renameSync(tmp, join(dataDir, FILE));
    return true;
  } catch {
    return false;
  }
}

/** The last server recorded in DATA_DIR (kept after it stops: its base is still where clients go), with `running`. */
export function readServerRecord(dataDir: string): (ServerRecord & { running: boolean }) | null {
  try {
    const record = JSON.parse(readFileSync(join(dataDir, FILE), "utf8")) as ServerRecord;
    if (typeof record.publicBaseUrl !== "string") return null;
    return { ...record, running: alive(record.pid) };
  } catch {
    return null;
  }
}

/**
 * The public base a tool on this machine should use: PUBLIC_BASE_URL when set, else the one the server
 * running on DATA_DIR recorded, else `http://HOST:PORT` when PORT or HOST is set, else the base the last
 * server of DATA_DIR recorded, else the configured default (decision 0710).
 */
export function resolvePublicBase(
  config: { publicBaseUrl: string; dataDir: string },
  env: Record<string, string | undefined> = process.env,
): string {
  if (rawSetting(env, "PUBLIC_BASE_URL")) return config.publicBaseUrl;
  const record = readServerRecord(config.dataDir);
  if (record?.running) return record.publicBaseUrl;
  if (rawSetting(env, "PORT") || rawSetting(env, "HOST")) return config.publicBaseUrl;
  return record?.publicBaseUrl ?? config.publicBaseUrl;
}
