import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/mod.ts";
import { type EmbeddedServer, startEmbeddedPostgres } from "./embedded.ts";

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

/** Opens Drizzle over postgres.js on a connection URL. */
export function connectDatabase(url: string, opts: { max?: number } = {}): DbHandle {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connection: { application_name: "site-content-api" },
  });
  const db = drizzle(sql, { schema });
  return { db, sql, url, close: () => sql.end({ timeout: 5 }) };
}

/** Opens DATABASE_URL, or the embedded PostgreSQL in `dataDir/pg` (reusing one another process runs). */
export async function openDatabase(opts: {
  databaseUrl: string | null;
  dataDir: string;
  max?: number;
}): Promise<DbHandle & { embedded: EmbeddedServer | null }> {
  if (opts.databaseUrl) return { ...connectDatabase(opts.databaseUrl, opts), embedded: null };
  const embedded = await startEmbeddedPostgres(opts.dataDir);
  const handle = connectDatabase(embedded.url, opts);
  return {
    ...handle,
    embedded,
    close: async () => {
      await handle.close();
      await embedded.release();
    },
  };
}
