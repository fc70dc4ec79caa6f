import { join } from "node:path";
import type { Config } from "@site/config";
import { openFsStore } from "./fs_store.ts";
import type { ObjectStore } from "./object_store.ts";
import { openS3Store } from "./s3_store.ts";

/** The largest image the service accepts (the spec's 10485760 bytes). */
export const MAX_MEDIA_BYTES = 10485760;

/** Opens the store the configuration names: S3 when S3_* is set, else DATA_DIR/objects. */
export function openObjectStore(config: Config, opts: { now?: () => Date } = {}): ObjectStore {
  if (config.s3) return openS3Store({ ...config.s3, timeoutMs: config.timeouts.storageMs });
  return openFsStore({
    root: join(config.dataDir, "objects"),
    publicBaseUrl: config.publicBaseUrl,
    secretKey: config.secretKey,
    maxPutBytes: Math.max(MAX_MEDIA_BYTES, config.social.videoMaxBytes),
    minFreeBytes: config.storageMinFreeBytes,
    now: opts.now,
  });
}
