import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startEmbeddedPostgres } from "@site/db";

/** Runs the embedded PostgreSQL in the given folder until killed; writes its superuser URL to `<dir>/pg.url` (0600). */
const dir = resolve(process.argv[2] ?? ".data/test");
const server = await startEmbeddedPostgres(dir);
// The test-database helper creates a database per test file: it needs the bootstrap superuser.
writeFileSync(join(dir, "pg.url"), server.superuserUrl(), { mode: 0o600 });
const stop = async () => {
  await server.release();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
setInterval(() => {}, 1 << 30);
