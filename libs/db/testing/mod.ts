import postgres from "postgres";
import { connectDatabase, type DbHandle } from "../src/connect.ts";
import { migrateDatabase } from "../src/migrate.ts";

/** The server tests use: TEST_DATABASE_URL, else the machine's PostgreSQL on loopback. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
}

/** A fresh, migrated database of its own for one test file; `close` drops it. */
export async function createTestDatabase(opts: { max?: number } = {}): Promise<DbHandle> {
  const admin = postgres(testServerUrl(), { max: 1, onnotice: () => {} });
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  const handle = connectDatabase(url.toString(), opts);
  await migrateDatabase(handle);
  return {
    ...handle,
    close: async () => {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
export {
  type PgBouncer,
  pgbouncerMissing,
  pgbouncerPath,
  sharedPgBouncer,
  startPgBouncer,
} from "./pgbouncer.ts";
export { childrenWith, freePort, pidsMentioning, spawnChild } from "./processes.ts";
