import { hostname } from "node:os";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type EmbeddedServer, startEmbeddedPostgres } from "./embedded.ts";
import * as schema from "./schema/mod.ts";
import { checkStatement } from "./write_scope.ts";

/** The Drizzle database with the whole schema. */
export type Database = PostgresJsDatabase<typeof schema>;
/** A transaction handle; domain functions accept either. */
export type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];

/** An open database with the way to close it (and the embedded server, if this process started one). */
export type DbHandle = {
  db: Database;
  sql: postgres.Sql;
  url: string;
  close(): Promise<void>;
};

/** How long a connection attempt and a statement may take; both bounded, so a request never hangs. */
export type DbTimeouts = {
  /** Connecting (TCP, TLS, authentication); default 3000 ms. */
  connectTimeoutMs?: number;
  /** Each statement, enforced by the server (`statement_timeout`); default 15000 ms; 0: none. */
  statementTimeoutMs?: number;
};

/**
 * `transaction`: the URL is a transaction-mode pooler (PgBouncer, `pool_mode = transaction`), where
 * consecutive statements may run on different server connections: no session state is relied on
 * (decision 1500).
 */
export type PoolerMode = "transaction" | null;

/**
 * How long a pool connection waits before connecting again after its connection failed, in seconds
 * (postgres.js's `backoff`; `retries` counts failures of the whole pool since its last success). The
 * default, 3^retries / 100 s up to 20 s, made a request that arrived a few seconds into an outage wait
 * for that timer instead of answering 503, and delayed the first success after PostgreSQL came back by
 * as long (the chaos run: 15 s answers, recovery 6.5 s). Capped at 250 ms, with jitter: while
 * PostgreSQL is down each pool tries at most a few connections a second, each refused at once or cut
 * at the connect timeout (decision 0901).
 */
export function reconnectDelaySeconds(retries: number): number {
  return Math.min(0.025 * 2 ** retries, 0.25) * (0.5 + Math.random() / 2);
}

/** The application_name of this process's pool connections (at most 63 bytes, as PostgreSQL keeps). */
const POOL_NAME = `site-content-api ${hostname()}:${process.pid}`.slice(0, 63);

/** Opens Drizzle over postgres.js on a connection URL. */
export function connectDatabase(
  url: string,
  opts: { max?: number; onQuery?: (query: string) => void; pooler?: PoolerMode } & DbTimeouts = {},
): DbHandle {
  const statementTimeout = opts.statementTimeoutMs ?? 15_000;
  const pooled = opts.pooler === "transaction";
  // A transaction left open by a stuck client cannot hold locks for long either.
  const timeouts =
    statementTimeout > 0
      ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout * 2 }
      : null;
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    ...(opts.onQuery ? { debug: (_c: number, query: string) => opts.onQuery!(query) } : {}),
    // postgres.js counts seconds; fractions work.
    connect_timeout: (opts.connectTimeoutMs ?? 3000) / 1000,
    backoff: reconnectDelaySeconds,
    // Through a transaction-mode pooler a statement prepared on one server connection is not there
    // on the next: unnamed statements only (postgres.js describes and runs one in a single Sync).
    ...(pooled ? { prepare: false } : {}),
    connection: {
      // One name per process (host:pid), so the API's /metrics can count its own pool in pg_stat_activity.
      application_name: POOL_NAME,
      // PgBouncer refuses startup parameters beyond its stock few ("unsupported startup parameter"):
      // through it the timeouts are set per transaction instead (SET LOCAL, below).
      ...(timeouts && !pooled ? timeouts : {}),
    },
  });
  const db = drizzle(preparing(sql, { pooled, timeouts }), { schema });
  return { db, sql, url, close: () => sql.end({ timeout: 5 }) };
}

/**
 * The client Drizzle talks to, with every statement prepared (decision 0807). Drizzle asks postgres.js
 * for unnamed statements (`prepare: false`), and postgres.js then describes a statement with
 * parameters before running it: two round trips for every query. Named statements are described
 * once per connection and run in one round trip afterwards (about 3× the throughput of a keyed read
 * here). Transactions and savepoints hand Drizzle clients of their own: those are wrapped too.
 */
function preparing<T extends object>(
  client: T,
  mode: { pooled: boolean; timeouts: Record<string, number> | null },
): T {
  // Through a pooler each transaction starts by setting its own timeouts (SET LOCAL: they end with it,
  // and the server connection goes back to the pool as it came); sent in the same round trip as the
  // transaction's first statement, since postgres.js pipelines on the transaction's connection.
  const local = mode.pooled && mode.timeouts ? mode.timeouts : null;
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const fn = value as (...a: unknown[]) => unknown;
      // Every statement Drizzle sends passes here: a write of a request already answered 503 at
      // shutdown is refused before it is sent (decision 0820).
      if (prop === "unsafe")
        return (query: string, args?: unknown[], options?: Record<string, unknown>) => {
          checkStatement(query);
          return fn(query, args, { ...options, prepare: !mode.pooled });
        };
      if (prop === "begin" || prop === "savepoint")
        return (...args: unknown[]) => {
          const body = args.pop() as (c: object) => unknown;
          return fn(...args, (inner: object) => {
            if (local && prop === "begin") setLocalTimeouts(inner as postgres.TransactionSql, local);
            return body(preparing(inner, { pooled: mode.pooled, timeouts: null }));
          });
        };
      return value;
    },
  });
}

/**
 * Queues `set local` of each timeout on a transaction's connection without waiting for it: it runs
 * before the transaction's first statement; if it failed, that statement fails with the transaction.
 */
function setLocalTimeouts(tx: postgres.TransactionSql, timeouts: Record<string, number>): void {
  const names = Object.keys(timeouts);
  const list = names.map((n, i) => `set_config('${n}', $${i + 1}, true)`).join(", ");
  tx.unsafe(
    `select ${list}`,
    names.map((n) => `${timeouts[n]}ms`),
  )
    .execute()
    .catch(() => {});
}

/** Opens DATABASE_URL, or the embedded PostgreSQL in `dataDir/pg` (reusing one another process runs). */
export async function openDatabase(
  opts: {
    databaseUrl: string | null;
    dataDir: string;
    max?: number;
    pooler?: PoolerMode;
  } & DbTimeouts,
): Promise<DbHandle & { embedded: EmbeddedServer | null }> {
  if (opts.databaseUrl) return { ...connectDatabase(opts.databaseUrl, opts), embedded: null };
  const embedded = await startEmbeddedPostgres(opts.dataDir);
  // The embedded server is always reached directly.
  const handle = connectDatabase(embedded.url, { ...opts, pooler: null });
  return {
    ...handle,
    embedded,
    close: async () => {
      await handle.close();
      await embedded.release();
    },
  };
}
