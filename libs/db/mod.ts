/** The database: Drizzle schema, connection (server or embedded), migrations. */
export * as schema from "./src/schema/mod.ts";
export * from "./src/schema/mod.ts";
export { type Database, type Tx, type DbHandle, connectDatabase, openDatabase } from "./src/connect.ts";
export { migrateDatabase } from "./src/migrate.ts";
export { startEmbeddedPostgres, type EmbeddedServer } from "./src/embedded.ts";
export { isUniqueViolation, isCheckViolation, isDatabaseUnavailable } from "./src/pg_errors.ts";
export { type ChannelWatch, watchChannel } from "./src/notify.ts";
export {
  provisionalWrites,
  runInWriteScope,
  WriteScope,
  WritesRefusedError,
} from "./src/write_scope.ts";
