import { type Config, createLogger, loadConfig, systemClock } from "@site/config";
import { migrateDatabase, openDatabase } from "@site/db";
import type { Context } from "@site/domain";
import { openRenderQueue, type RenderQueue } from "@site/queue";
import { type ObjectStore, openObjectStore } from "@site/storage";

/** The dependencies of a process, opened once, closed in reverse order. */
export type Runtime = Context & {
  /** The object store the configuration names (S3, or DATA_DIR/objects). */
  store: ObjectStore;
  /** The database URL in use (the embedded server's when DATABASE_URL is unset). */
  databaseUrl: string;
  /** True when this process started the embedded PostgreSQL. */
  ownsEmbeddedDatabase: boolean;
  /** The render queue: BullMQ on REDIS_URL, else in-process (shared by the API and daemon of this process). */
  queue: RenderQueue;
  close(): Promise<void>;
};

/** Opens the database (migrating it when `migrate`), and returns the context every app is built from. */
export async function openRuntime(
  opts: { config?: Config; migrate?: boolean; dbMax?: number } = {},
): Promise<Runtime> {
  const config = opts.config ?? loadConfig();
  const log = createLogger(config.logLevel);
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: opts.dbMax,
  });
  if (opts.migrate !== false) await migrateDatabase(handle);
  const closers: (() => Promise<void>)[] = [() => handle.close()];
  const queue = openRenderQueue({
    redisUrl: config.redisUrl,
    log,
    prefix: config.queuePrefix,
    lockDurationMs: config.renderJobLockMs,
  });
  closers.push(() => queue.close());
  const store = openObjectStore(config);
  closers.push(() => store.close());
  return {
    config,
    db: handle.db,
    store,
    clock: systemClock,
    log,
    databaseUrl: handle.url,
    ownsEmbeddedDatabase: handle.embedded?.owned ?? false,
    queue,
    close: async () => {
      for (const close of closers.reverse())
        await close().catch((err) => log.error("close failed", { cause: String(err) }));
    },
  };
}
