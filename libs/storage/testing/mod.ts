/** Test support for libs/storage: an S3-compatible server (s3rver) on loopback, and a store whose writes fail. */
export * from "./failing_store.ts";
export * from "./s3_server.ts";
