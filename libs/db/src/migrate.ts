import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import type { DbHandle } from "./connect.ts";

const MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));
const LOCK_ID = 720_311_001;

/** Applies the committed migrations once, even when several processes start together. */
export async function migrateDatabase(handle: DbHandle): Promise<void> {
  const reserved = await handle.sql.reserve();
  try {
    await reserved`select pg_advisory_lock(${LOCK_ID})`;
    await migrate(handle.db, { migrationsFolder: MIGRATIONS });
  } finally {
    await reserved`select pg_advisory_unlock(${LOCK_ID})`;
    reserved.release();
  }
}
