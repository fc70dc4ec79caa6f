/** Test support for libs/domain: small valid image files of every accepted type, adversarial page bodies. */

export * from "./adversarial_pages.ts";
export * from "./context.ts";
export * from "./foreign_webp.ts";
export * from "./pixel_bomb.ts";
export * from "./samples.ts";
export * from "./smtp_sink.ts";
