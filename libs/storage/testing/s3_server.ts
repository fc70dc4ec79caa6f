import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import type { S3StoreOptions } from "../src/s3_store.ts";

/** Starts a real S3-compatible server (s3rver) on loopback for tests; `stop` removes its files. */
export async function startTestS3(bucket = "test-media"): Promise<{
  options: S3StoreOptions;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), "s3rver-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const addr = (await server.run()) as { port: number };
  return {
    options: {
      endpoint: `http://127.0.0.1:${addr.port}`,
      bucket,
      region: "us-east-1",
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
      forcePathStyle: true,
    },
    stop: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
