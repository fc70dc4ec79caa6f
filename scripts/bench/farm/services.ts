// The farm's shared services: its role and database, PgBouncer in front of them, and a Redis of its own.

import { connectDatabase, migrateDatabase } from "@site/db";
import { startPgBouncer } from "@site/db/testing";
import { startRedisServer } from "@site/render-daemon/testing";
import postgres from "postgres";
import type { FarmOptions } from "./types.ts";

export type FarmServices = {
  /** The farm role's direct URL to its database. */
  direct: string;
  /** The same through PgBouncer. */
  pooled: string;
  /** The bench's own reads (superuser, direct): outside the role's limit, not counted as the farm's. */
  watch: postgres.Sql;
  /** PgBouncer's admin console (SHOW POOLS, SHOW STATS). */
  poolerAdmin: postgres.Sql;
  /** The migrated database, for seeding (closed by the caller once seeded). */
  seedDb: ReturnType<typeof connectDatabase>;
  redisUrl: string;
  redisClient: Bun.RedisClient;
};

/**
 * Creates the role (its CONNECTION LIMIT stands for the server's max_connections) and its database,
 * migrates it, and starts PgBouncer and Redis. Each teardown goes into `cleanups`, in the order the
 * caller runs them reversed.
 */
export async function startServices(
  opts: FarmOptions,
  tag: string,
  admin: postgres.Sql,
  cleanups: (() => Promise<unknown>)[],
): Promise<FarmServices> {
  await admin.unsafe(`create role ${tag} login nosuperuser connection limit ${opts.connLimit}`);
  cleanups.push(() => admin.unsafe(`drop role if exists ${tag}`));
  await admin.unsafe(`create database ${tag} owner ${tag}`);
  cleanups.push(() => admin.unsafe(`drop database if exists ${tag} with (force)`));
  const directUrl = new URL(opts.serverUrl);
  directUrl.username = tag;
  directUrl.password = "";
  directUrl.pathname = `/${tag}`;
  const direct = directUrl.toString();
  const watchUrl = new URL(opts.serverUrl);
  watchUrl.pathname = `/${tag}`;
  const watch = postgres(watchUrl.toString(), { max: 2, onnotice: () => {} });
  cleanups.unshift(() => watch.end({ timeout: 1 }));
  const seedDb = connectDatabase(direct, { max: 2 });
  await migrateDatabase(seedDb);

  const pgb = await startPgBouncer(direct, { poolSize: opts.poolSize });
  cleanups.unshift(() => pgb.stop());
  const pooled = pgb.via(direct);
  const poolerAdmin = postgres(pgb.via(direct).replace(/\/[^/?]*(\?|$)/, "/pgbouncer$1"), {
    max: 1,
    prepare: false,
    fetch_types: false,
    onnotice: () => {},
  });
  cleanups.unshift(() => poolerAdmin.end({ timeout: 1 }));
  const redis = await startRedisServer();
  cleanups.unshift(() => redis.stop());
  const redisClient = new Bun.RedisClient(redis.url);
  cleanups.unshift(async () => redisClient.close());
  return { direct, pooled, watch, poolerAdmin, seedDb, redisUrl: redis.url, redisClient };
}
