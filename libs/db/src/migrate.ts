import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { DbHandle } from "./connect.ts";

const MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));
const LOCK_ID = 720_311_001;

/**
 * Applies the committed migrations once, even when several processes start together. The lock is a
 * transaction-scoped advisory lock (`pg_advisory_xact_lock`) held by a transaction left open on a
 * connection of its own while the migrations run on the pool: it works through a transaction-mode
 * pooler too, where a session lock would stay on whichever server connection took it (decision 1500).
 * The holder waits and idles without the pool's timeouts: a long migration must not lose the lock.
 */
export async function migrateDatabase(handle: DbHandle): Promise<void> {
  const lock = postgres(handle.url, {
    max: 1,
    prepare: false,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "site-content-api migrate" },
  });
  try {
    await lock.begin(async (tx) => {
      await tx.unsafe(
        "select set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)",
      );
      await tx`select pg_advisory_xact_lock(${LOCK_ID})`;
      await migrate(handle.db, { migrationsFolder: MIGRATIONS });
    });
  } finally {
    await lock.end({ timeout: 5 });
  }
}
