/** The media library: file types, grants, quota and daily caps, upload, URL import, delivery and share tokens. */
export * from "./delivery.ts";
export * from "./embed.ts";
export * from "./grants.ts";
export * from "./image_types.ts";
export * from "./import_url.ts";
export * from "./landing.ts";
export * from "./library.ts";
export * from "./models.ts";
export * from "./mp4.ts";
export * from "./pixels.ts";
export * from "./quota.ts";
export * from "./refs.ts";
export * from "./share.ts";
export * from "./site_files.ts";
export * from "./site_purge.ts";
export * from "./sweeper.ts";
export * from "./upload.ts";
