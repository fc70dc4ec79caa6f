/** Test support for libs/domain: small valid image files of every accepted type. */
export * from "./samples.ts";
export * from "./foreign_webp.ts";
