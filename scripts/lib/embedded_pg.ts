import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startEmbeddedPostgres } from "@site/db";

/** Runs the embedded PostgreSQL in the given folder until killed; writes its URL to `<dir>/pg.url`. */
const dir = resolve(process.argv[2] ?? ".data/test");
const server = await startEmbeddedPostgres(dir);
writeFileSync(join(dir, "pg.url"), server.url);
const stop = async () => {
  await server.release();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
setInterval(() => {}, 1 << 30);
