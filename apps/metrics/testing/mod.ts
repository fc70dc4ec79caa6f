import { createLogger, loadConfig, systemClock } from "@site/config";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import type { Context } from "@site/domain/core";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";

/** A test database of its own and the fake platforms on loopback, with a context pointed at both. */
export type MetricsTestbed = { handle: DbHandle; fake: FakePlatforms; ctx: Context; close(): Promise<void> };

/** Starts the testbed the collector and service tests share. */
export async function startMetricsTestbed(): Promise<MetricsTestbed> {
  const handle = await createTestDatabase();
  const fake = startFakePlatforms();
  const ctx: Context = {
    config: loadConfig({
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: "/tmp/site-test-data",
      ...fake.env,
      ...fake.oauthEnv,
      SOCIAL_POLL_INTERVAL_MS: "5",
    }),
    db: handle.db,
    clock: systemClock,
    log: createLogger("silent" as never),
  };
  return {
    handle,
    fake,
    ctx,
    close: async () => {
      fake.close();
      await handle.close();
    },
  };
}
