import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { DbHandle } from "./connect.ts";

const MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));
const LOCK_ID = 720_311_001;

/**
 * Applies the committed migrations once, even when several processes start together. The lock is a
 * transaction-scoped advisory lock held by a transaction left open on a connection of its own while the
 * migrations run on the pool: it works through a transaction-mode pooler too, where a session lock would
 * stay on whichever server connection took it (decision 1500). It is *tried*, not waited for
 * (`pg_try_advisory_xact_lock`): a process that does not get it ends its transaction and tries again a
 * moment later, so waiters hold no server connection. Through a pooler whose pool is smaller than the
 * number of processes starting at once, waiters blocked in `pg_advisory_xact_lock` took every server
 * connection, the holder's migrations waited for one, and all of them timed out (decision 1504).
 * The holder idles without the pool's timeouts: a long migration must not lose the lock.
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
    for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
      const applied = await lock.begin(async (tx) => {
        await tx.unsafe(
          "select set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)",
        );
        const [row] = await tx`select pg_try_advisory_xact_lock(${LOCK_ID}) as got`;
        if (!row?.got) return false;
        await migrate(handle.db, { migrationsFolder: MIGRATIONS });
        return true;
      });
      if (applied) return;
      // Another process migrates: try again shortly (jittered, so starters do not move in step).
      await Bun.sleep(wait / 2 + Math.random() * wait);
    }
  } finally {
    await lock.end({ timeout: 5 });
  }
}
