/** Test support for libs/social: fake platform servers on loopback. */

export * from "./fake_images.ts";
export * from "./fake_platforms.ts";
