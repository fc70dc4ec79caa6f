import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, systemClock } from "@site/config";
import type { DbHandle } from "@site/db";
import { createTestDatabase } from "@site/db/testing";
import type { MediaContext } from "@site/domain/media";
import { type FakePlatforms, startFakePlatforms } from "@site/social/testing";
import { openFsStore } from "@site/storage";

/** A test database of its own and the fake platforms on loopback, with a context pointed at both. */
export type MetricsTestbed = {
  handle: DbHandle;
  fake: FakePlatforms;
  ctx: MediaContext;
  close(): Promise<void>;
};

/** Starts the testbed the collector and service tests share. */
export async function startMetricsTestbed(): Promise<MetricsTestbed> {
  const handle = await createTestDatabase();
  const fake = startFakePlatforms();
  const storeDir = mkdtempSync(join(tmpdir(), "site-metrics-objects-"));
  const ctx: MediaContext = {
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
    store: openFsStore({
      root: storeDir,
      publicBaseUrl: "http://127.0.0.1:3000",
      secretKey: "test-secret-key-0123456789",
    }),
  };
  return {
    handle,
    fake,
    ctx,
    close: async () => {
      fake.close();
      await handle.close();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
