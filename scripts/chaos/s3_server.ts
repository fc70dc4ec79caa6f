/**
 * s3rver in a process of its own, so the chaos run can kill it and start it again on the same port and
 * files: `bun scripts/chaos/s3_server.ts <port> <dir> <bucket>`.
 */
import S3rver from "s3rver";

const [port, directory, bucket] = process.argv.slice(2);
if (!port || !directory || !bucket) throw new Error("usage: s3_server.ts <port> <dir> <bucket>");
const server = new S3rver({
  address: "127.0.0.1",
  port: Number(port),
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
});
await server.run();
console.log(`s3rver on 127.0.0.1:${port}`);
