import { type Static, Type } from "@sinclair/typebox";
import { named } from "@site/domain/core";
import { SocialMediaView } from "@site/domain/social";
import { WebhooksTold } from "@site/domain/webhooks";
import { ScreenshotRequestBody } from "./models.ts";

// One model per shape: the API route, the MCP tool and the TypeScript type all read these.

/** The motions a device clip can make (decision 1221). */
export const ClipMotion = Type.Union(
  [Type.Literal("scroll"), Type.Literal("scroll-tilt"), Type.Literal("orbit")],
  {
    description:
      "scroll: the device holds still while the page scrolls; scroll-tilt: the camera moves a few degrees as it scrolls; orbit: the device turns while the page scrolls",
  },
);
/** A clip's motion. */
export type ClipMotion = Static<typeof ClipMotion>;

const capture = ScreenshotRequestBody.properties;

/** The body of POST /api/v1/social/media/clips. */
export const ClipRequestBody = Type.Object({
  url: Type.String({ description: "public http(s) page URL to film" }),
  styleId: capture.styleId,
  theme: Type.Optional(
    Type.Union([Type.Literal("light"), Type.Literal("dark")], {
      description: "the page's colour scheme and the look's backdrop, default light",
    }),
  ),
  viewportWidth: Type.Optional(
    Type.Integer({ minimum: 320, maximum: 3840, description: "CSS px; default the style's (1440 for most)" }),
  ),
  viewportHeight: Type.Optional(
    Type.Integer({ minimum: 320, maximum: 3840, description: "CSS px; default the style's (900 for most)" }),
  ),
  motion: ClipMotion,
  durationS: Type.Optional(
    Type.Number({
      minimum: 2,
      maximum: 15,
      multipleOf: 0.5,
      description: "seconds, 2–15 in half seconds, default 6",
    }),
  ),
  fps: Type.Optional(
    Type.Union([Type.Literal(24), Type.Literal(30), Type.Literal(60)], {
      description: "frames per second, default 30",
    }),
  ),
  width: Type.Optional(
    Type.Integer({
      minimum: 320,
      maximum: 1920,
      multipleOf: 2,
      description: "output px, even, default 1080",
    }),
  ),
  height: Type.Optional(
    Type.Integer({
      minimum: 320,
      maximum: 1920,
      multipleOf: 2,
      description: "output px, even, default 1350",
    }),
  ),
  hideSelectors: capture.hideSelectors,
  waitForSelector: capture.waitForSelector,
  delayMs: capture.delayMs,
  blockAds: capture.blockAds,
  hideCookieBanners: capture.hideCookieBanners,
  estimateOnly: Type.Optional(
    Type.Boolean({ description: "true prices the clip (200) without starting or charging" }),
  ),
});
/** A clip request body that passed its model. */
export type ClipRequestBody = Static<typeof ClipRequestBody>;

/** The answer to a clip POST: a free estimate, or the queued clip. */
export const ClipQueueAnswer = named(
  "ClipQueueAnswer",
  Type.Union([
    Type.Object({ estimate: Type.Literal(true), credits: Type.Integer({ examples: [30] }) }),
    Type.Object({
      clipId: Type.String({ format: "uuid" }),
      status: Type.Literal("pending"),
      credits: Type.Integer({ examples: [30] }),
    }),
  ]),
);
/** The answer to a clip POST. */
export type ClipQueueAnswer = Static<typeof ClipQueueAnswer>;

/**
 * The create_clip tool's answer: REST's ClipQueueAnswer, and the webhooks that will be told how the
 * clip ends (`type: object` because an MCP output schema must say so; ClipQueueAnswer is a union).
 */
export const ClipQueued = named(
  "ClipQueued",
  Type.Intersect([ClipQueueAnswer, WebhooksTold], {
    type: "object",
    description: "the clip POST's answer, with the webhooks that will be told how the clip ends",
  }),
);

/** A device clip as the API answers it. */
export const ClipView = named(
  "Clip",
  Type.Object({
    clipId: Type.String({ format: "uuid" }),
    status: Type.Union([Type.Literal("pending"), Type.Literal("done"), Type.Literal("failed")]),
    media: Type.Union([SocialMediaView, Type.Null()], {
      description: "the social media library's entry (kind video) once done",
    }),
    posterUrl: Type.Union([Type.String(), Type.Null()], {
      description: "the first frame (JPEG) with a short-lived member grant, once done; never persist",
    }),
    durationS: Type.Number(),
    fps: Type.Integer(),
    width: Type.Integer(),
    height: Type.Integer(),
    warnings: Type.Array(Type.String()),
    error: Type.Union([Type.String(), Type.Null()]),
  }),
);
/** A device clip as the API answers it. */
export type ClipView = Static<typeof ClipView>;
