import {
  type Config,
  createLogger,
  DB_POOL_DEFAULTS,
  type Logger,
  loadConfig,
  systemClock,
} from "@site/config";
import { migrateDatabase, openDatabase } from "@site/db";
import type { Context } from "@site/domain/core";
import { type JobQueue, openJobQueue } from "@site/queue";
import { type ObjectStore, openObjectStore } from "@site/storage";
import { sharePublicBase } from "./public_base.ts";

/** The dependencies of a process, opened once, closed in reverse order. */
export type Runtime = Context & {
  /** The object store the configuration names (S3, or DATA_DIR/objects). */
  store: ObjectStore;
  /** The database URL in use (the embedded server's when DATABASE_URL is unset). */
  databaseUrl: string;
  /**
   * The direct connection LISTEN uses (DATABASE_LISTEN_URL, else the database URL); null when there is
   * none (DATABASE_POOLER=transaction without DATABASE_LISTEN_URL): listeners poll instead.
   */
  listenUrl: string | null;
  /** The pool size this process opened (DB_POOL_MAX, else its app's default). */
  dbPoolMax: number;
  /** True when this process started the embedded PostgreSQL. */
  ownsEmbeddedDatabase: boolean;
  /** The render queue: BullMQ on REDIS_URL, else in-process (shared by the API and daemon of this process). */
  queue: JobQueue;
  close(): Promise<void>;
};

/** Says loudly, at every start, that the address guard is opened for development. */
function warnLocalNetwork(log: Logger): void {
  const line = "!".repeat(100);
  process.stderr.write(
    `${line}\n!! ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT=1: URL import and filming may reach THIS MACHINE and its\n!! private network (loopback, 10/8, 172.16/12, 192.168/16, fc00::/7). Development only; never expose\n!! this server. Cloud metadata (link-local) stays blocked.\n${line}\n`,
  );
  log.warn("address guard opened for development: loopback and private addresses allowed", {
    setting: "ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT",
  });
}

/**
 * Where LISTEN connects: DATABASE_LISTEN_URL, else the database URL, except through a transaction-mode
 * pooler, where a LISTEN would sit on a server connection other clients then use: none, said at start.
 */
export function listenUrlOf(config: Config, databaseUrl: string, log: Logger): string | null {
  if (config.databaseListenUrl) return config.databaseListenUrl;
  if (config.databasePooler !== "transaction" || !config.databaseUrl) return databaseUrl;
  log.warn(
    `DATABASE_POOLER=transaction without DATABASE_LISTEN_URL: no LISTEN; webhook deliveries are polled for every ${config.databaseListenPollMs} ms and API keys are looked up on every request`,
    { pollMs: config.databaseListenPollMs },
  );
  return null;
}

/** Opens the database (migrating it when `migrate`), and returns the context every app is built from. */
export async function openRuntime(
  opts: {
    config?: Config;
    migrate?: boolean;
    dbMax?: number;
    /**
     * The API records its PUBLIC_BASE_URL (`record`); other processes take it when they have none
     * (`adopt`, the default when the configuration is read from the environment; decision 1454).
     */
    publicBase?: "record" | "adopt" | "none";
    /** Which app this process is, for its DB_POOL_MAX default (decision 1502); default the API's. */
    app?: keyof typeof DB_POOL_DEFAULTS;
  } = {},
): Promise<Runtime> {
  let config = opts.config ?? loadConfig();
  const log = createLogger(config.logLevel);
  if (config.allowLocalNetworkForDevelopment) warnLocalNetwork(log);
  const dbPoolMax = opts.dbMax ?? config.dbPoolMax ?? DB_POOL_DEFAULTS[opts.app ?? "api"];
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    max: dbPoolMax,
    connectTimeoutMs: config.timeouts.dbConnectMs,
    statementTimeoutMs: config.timeouts.dbStatementMs,
    pooler: config.databasePooler,
  });
  const listenUrl = listenUrlOf(config, handle.url, log);
  if (opts.migrate !== false) await migrateDatabase(handle);
  const role = opts.publicBase ?? (opts.config ? "none" : "adopt");
  if (role !== "none") config = await sharePublicBase({ db: handle.db, config, log }, role);
  const closers: (() => Promise<void>)[] = [() => handle.close()];
  const queue = openJobQueue({
    redisUrl: config.redisUrl,
    log,
    prefix: config.queuePrefix,
    lockDurationMs: config.renderJobLockMs,
    commandTimeoutMs: config.timeouts.redisCommandMs,
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
    listenUrl,
    dbPoolMax,
    ownsEmbeddedDatabase: handle.embedded?.owned ?? false,
    queue,
    close: async () => {
      for (const close of closers.reverse())
        await close().catch((err) => log.error("close failed", { cause: err }));
    },
  };
}
