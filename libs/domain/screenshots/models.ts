import { type Static, Type } from "@sinclair/typebox";
import { named } from "@site/domain/core";
import { WebhooksTold } from "@site/domain/webhooks";

// A CSS selector as a request may name it: no braces, semicolons or angle brackets, so it can never
// close the rule it is put in; Chromium judges the rest (an invalid one is a warning, not a failure).
const Selector = (description: string) =>
  Type.String({ minLength: 1, maxLength: 200, pattern: "^[^{};<>\\u0000-\\u001f]+$", description });

// One model per shape: the API route, the MCP tool and the TypeScript type all read these.

/** The body of POST …/media/screenshot: every bound of a screenshot request. */
export const ScreenshotRequestBody = Type.Object({
  url: Type.String({ description: "public http(s) page URL to film" }),
  estimateOnly: Type.Optional(
    Type.Boolean({ description: "true prices the render (200) without starting or charging" }),
  ),
  styleId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: "id from GET …/media/screenshot-styles; unknown: 404",
    }),
  ),
  theme: Type.Optional(
    Type.Union([Type.Literal("light"), Type.Literal("dark")], {
      description: "films both variants and frames this one; omitted: the project's first captured variant",
    }),
  ),
  framing: Type.Optional(
    Type.Number({ minimum: 0.4, maximum: 3, description: "camera distance; below 1 is tighter" }),
  ),
  chrome: Type.Optional(
    Type.Union([Type.Literal("none"), Type.Literal("light"), Type.Literal("dark")], {
      description: "browser chrome",
    }),
  ),
  viewportWidth: Type.Optional(
    Type.Integer({ minimum: 320, maximum: 3840, description: "CSS px, default 1440" }),
  ),
  viewportHeight: Type.Optional(
    Type.Integer({ minimum: 320, maximum: 3840, description: "CSS px, default 900" }),
  ),
  deviceScaleFactor: Type.Optional(
    Type.Number({ minimum: 1, maximum: 3, description: "pixel density, default 1" }),
  ),
  fullPage: Type.Optional(
    Type.Boolean({
      description: "true films the whole scroll height (lazy content is scrolled into view first)",
    }),
  ),
  hideSelectors: Type.Optional(
    Type.Array(Selector("a CSS selector"), {
      maxItems: 20,
      description: "CSS selectors hidden (display: none) before filming, at most 20; a capture setting",
    }),
  ),
  waitForSelector: Type.Optional(
    Selector(
      "film once an element matching this CSS selector is visible; after 10 s the page is filmed anyway, with a warning",
    ),
  ),
  delayMs: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10000,
      description: "extra wait after the page settled, ms, 0..10000",
    }),
  ),
  blockAds: Type.Optional(
    Type.Boolean({
      description: "block requests to advertising hosts (Ghostery tracker database), default false",
    }),
  ),
  hideCookieBanners: Type.Optional(
    Type.Boolean({
      description: "dismiss cookie consent pop-ups, opting out (DuckDuckGo autoconsent rules), default true",
    }),
  ),
  recapture: Type.Optional(
    Type.Boolean({ description: "true films again instead of reusing the stored capture" }),
  ),
});
/** A screenshot request body that passed its model. */
export type ScreenshotRequestBody = Static<typeof ScreenshotRequestBody>;

/** The answer to a screenshot POST: a free estimate, or the queued render. */
export const QueueAnswer = named(
  "ScreenshotQueueAnswer",
  Type.Union([
    Type.Object({ estimate: Type.Literal(true), credits: Type.Integer({ examples: [10] }) }),
    Type.Object({
      estimate: Type.Literal(false),
      renderId: Type.String({ format: "uuid" }),
      status: Type.Literal("pending"),
      sourceUrl: Type.String(),
      credits: Type.Integer({ examples: [10] }),
    }),
  ]),
);
/** The answer to a screenshot POST. */
export type QueueAnswer = Static<typeof QueueAnswer>;

/**
 * The queue_screenshot tool's answer: REST's QueueAnswer, and the webhooks that will be told how the
 * render ends (`type: object` because an MCP output schema must say so; QueueAnswer is a union).
 */
export const ScreenshotQueued = named(
  "ScreenshotQueued",
  Type.Intersect([QueueAnswer, WebhooksTold], {
    type: "object",
    description: "the screenshot POST's answer, with the webhooks that will be told how the render ends",
  }),
);

/** Where a render stands: pending, done, or failed (the spec leaves the failure value open; see 0401). */
export const RenderStatus = Type.Union([
  Type.Literal("pending"),
  Type.Literal("done"),
  Type.Literal("failed"),
]);
/** Where a render stands. */
export type RenderStatus = Static<typeof RenderStatus>;

/** The screenshot render as the API answers it (width, height and warnings once done). */
export const RenderView = named(
  "Render",
  Type.Object({
    renderId: Type.String({ format: "uuid" }),
    status: RenderStatus,
    sourceUrl: Type.String(),
    imageUrl: Type.Union([Type.String({ description: "the library image URL once done" }), Type.Null()]),
    displayUrl: Type.Optional(
      Type.String({
        description: "when done: imageUrl with a short-lived member grant, for previews; never persist",
      }),
    ),
    credits: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    width: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    warnings: Type.Optional(Type.Array(Type.String())),
  }),
);
/** The screenshot render as the API answers it. */
export type RenderView = Static<typeof RenderView>;

/** The get_screenshot tool's answer: the render as REST answers it, and what an agent does next. */
export const ScreenshotResult = named(
  "ScreenshotResult",
  Type.Intersect(
    [
      RenderView,
      Type.Object({
        embed: Type.Optional(
          Type.String({ description: "when done: the image block that embeds imageUrl in page MDX" }),
        ),
        nextStep: Type.Optional(
          Type.String({
            description: "when the page redirected to a sign-in form: how to sign in and film it again",
          }),
        ),
      }),
    ],
    { description: "a render as REST answers it, with its embed snippet once done and a next step" },
  ),
);

/** The body of POST …/media/screenshot-login. */
export const LoginLinkBody = Type.Object({ url: Type.String({ description: "the login-gated page" }) });
/** A login link request that passed its model. */
export type LoginLinkBody = Static<typeof LoginLinkBody>;

/** The screenshot login session as the API answers it. */
export const LoginLinkView = named(
  "LoginLink",
  Type.Object({
    loginUrl: Type.String({ description: "sign-in page link, valid about one hour, usable once" }),
    sourceUrl: Type.String(),
    interactive: Type.Boolean({
      description: "false: no hosted browser here; the page asks for credentials by hand",
    }),
    expiresAt: Type.String({ description: "ISO 8601 UTC" }),
  }),
);
/** The screenshot login session as the API answers it. */
export type LoginLinkView = Static<typeof LoginLinkView>;

/** The bounds of the style listing's page size. */
export const STYLE_LIMIT = { default: 50, min: 1, max: 100 } as const;

/** The query of the style listing. */
export const StyleListQuery = Type.Object({
  featured: Type.Optional(
    Type.Boolean({ description: "true (or 1): only the curated gallery (recommended for pickers)" }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: STYLE_LIMIT.min,
      maximum: STYLE_LIMIT.max,
      default: STYLE_LIMIT.default,
      description: `at most this many styles, ${STYLE_LIMIT.min}..${STYLE_LIMIT.max}, default ${STYLE_LIMIT.default}`,
    }),
  ),
});
/** A checked style listing query. */
export type StyleListQuery = Static<typeof StyleListQuery>;

/** A screenshot style as the API answers it. */
export const StyleView = Type.Object({
  id: Type.String({ examples: ["laptop-studio"], description: "pass as styleId to POST …/media/screenshot" }),
  name: Type.String(),
  description: Type.String(),
  featured: Type.Boolean(),
  author: Type.String(),
  previewImageUrl: Type.String({ description: "absolute URL of a preview rendered by this pipeline" }),
  previewSourceHost: Type.String({ description: "the host filmed for the preview" }),
});
/** A screenshot style as the API answers it. */
export type ScreenshotStyleView = Static<typeof StyleView>;

/** The screenshot styles (GET …/media/screenshot/styles, list_screenshot_styles). */
export const StyleList = named("StyleList", Type.Object({ styles: Type.Array(StyleView) }));
