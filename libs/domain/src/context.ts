import type { Clock, Config, Logger } from "@site/config";
import type { Database } from "@site/db";

/** What every domain function may use: settings, the database, time and the log. */
export type Context = {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
};
