/** The chaos run's scenarios, by the name `--only` takes, in the order a full run plays them. */
import type { World } from "../world.ts";
import { apiKilled } from "./api_killed.ts";
import { apiSigterm } from "./api_sigterm.ts";
import { daemonKilled } from "./daemon_killed.ts";
import { databaseKilled } from "./database_killed.ts";
import { diskFull } from "./disk_full.ts";
import { fetchLimit } from "./fetch_limit.ts";
import { partialStore } from "./partial_store.ts";
import { redisKilled } from "./redis_killed.ts";
import { storageDown } from "./storage_down.ts";
import { zombieHost } from "./zombie_host.ts";

/** One scenario: plays against the world and records its row. */
export type Scenario = (w: World) => Promise<void>;

/** Every scenario by name. */
export const SCENARIOS: Record<string, Scenario> = {
  "database killed": databaseKilled,
  "redis killed": redisKilled,
  "storage down": storageDown,
  "API killed (S3)": (w) => apiKilled(w, "API killed (S3)", w.s3Stack),
  "API killed (disk)": (w) => apiKilled(w, "API killed (disk)", w.diskStack),
  "daemon killed": daemonKilled,
  "API SIGTERM": apiSigterm,
  "fetch limit": fetchLimit,
  "disk full": diskFull,
  "partial store": partialStore,
  "zombie host": zombieHost,
};
