/** Object storage: one ObjectStore interface with a local-disk and an S3 driver. */

export { type FsStoreOptions, openFsStore } from "./src/fs_store.ts";
export * from "./src/object_store.ts";
export { MAX_MEDIA_BYTES, openObjectStore } from "./src/open_store.ts";
export { openS3Store, type S3StoreOptions, s3StoreErrorOf, s3UrlPrefixes } from "./src/s3_store.ts";
