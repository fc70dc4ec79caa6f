/** The database: Drizzle schema, connection (server or embedded), migrations. */

export {
  connectDatabase,
  type Database,
  type DbHandle,
  openDatabase,
  type PoolerMode,
  type Tx,
} from "./src/connect.ts";
export { type EmbeddedServer, startEmbeddedPostgres } from "./src/embedded.ts";
export { migrateDatabase } from "./src/migrate.ts";
export { type ChannelWatch, notifyWorkEnded, WORK_ENDED_CHANNEL, watchChannel } from "./src/notify.ts";
export { isDatabaseUnavailable, isUniqueViolation } from "./src/pg_errors.ts";
export * as schema from "./src/schema/mod.ts";
export * from "./src/schema/mod.ts";
export {
  provisionalWrites,
  runInWriteScope,
  WriteScope,
  WritesRefusedError,
  writeScopeState,
} from "./src/write_scope.ts";
