import { Elysia, t } from "elysia";
import { createLoginLink, getRender, queueScreenshot } from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

const ScreenshotBody = t.Object({
  url: t.String({ description: "public http(s) page URL to film" }),
  estimateOnly: t.Optional(
    t.Boolean({ description: "true prices the render (200) without starting or charging" }),
  ),
  styleId: t.Optional(t.String({ description: "id from GET …/media/screenshot-styles; unknown: 404" })),
  theme: t.Optional(
    t.Union([t.Literal("light"), t.Literal("dark")], {
      description: "films both variants and frames this one; omitted: the project's first captured variant",
    }),
  ),
  framing: t.Optional(
    t.Number({ minimum: 0.4, maximum: 3, description: "camera distance; below 1 is tighter" }),
  ),
  chrome: t.Optional(
    t.Union([t.Literal("none"), t.Literal("light"), t.Literal("dark")], { description: "browser chrome" }),
  ),
  viewportWidth: t.Optional(t.Integer({ minimum: 320, maximum: 3840, description: "CSS px, default 1440" })),
  viewportHeight: t.Optional(t.Integer({ minimum: 320, maximum: 3840, description: "CSS px, default 900" })),
  deviceScaleFactor: t.Optional(
    t.Number({ minimum: 1, maximum: 3, description: "pixel density, default 1" }),
  ),
  fullPage: t.Optional(t.Boolean({ description: "true films the whole scroll height" })),
  recapture: t.Optional(t.Boolean({ description: "true films again instead of reusing the stored capture" })),
});

const QueueAnswer = t.Object({
  estimate: t.Boolean(),
  credits: t.Integer({ examples: [10] }),
  renderId: t.Optional(t.String({ format: "uuid" })),
  status: t.Optional(t.Literal("pending")),
  sourceUrl: t.Optional(t.String()),
});

const RenderSchema = t.Object({
  renderId: t.String({ format: "uuid" }),
  status: t.Union([t.Literal("pending"), t.Literal("done"), t.Literal("failed")]),
  sourceUrl: t.String(),
  imageUrl: t.Nullable(t.String({ description: "the library image URL once done" })),
  credits: t.Integer(),
  error: t.Nullable(t.String()),
  width: t.Optional(t.Integer()),
  height: t.Optional(t.Integer()),
  warnings: t.Optional(t.Array(t.String())),
});

const LoginSession = t.Object({
  loginUrl: t.String({ description: "sign-in page link, valid about one hour, usable once" }),
  sourceUrl: t.String(),
  interactive: t.Boolean({
    description: "false: no hosted browser here; the page asks for credentials by hand",
  }),
  expiresAt: t.String({ description: "ISO 8601 UTC" }),
});

/** Screenshot renders and login links (spec: POST/GET media/screenshot, POST media/screenshot-login). */
export function screenshotRoutes(deps: AppDeps, guard: Guard) {
  return new Elysia()
    .post(
      "/api/v1/sites/:siteId/media/screenshot",
      async ({ request, params, body, set }) => {
        const principal = await guard(request, "content:write");
        const answer = await queueScreenshot(deps, principal, params.siteId, body);
        set.status = answer.estimate ? 200 : 202;
        return answer;
      },
      {
        ...guard.hook("content:write"),
        body: ScreenshotBody,
        response: { 200: QueueAnswer, 202: QueueAnswer, ...errors(400, 401, 402, 403, 404, 501, 502) },
        detail: {
          summary: "Queue a screenshot render (10 credits) or price it",
          description:
            "Films the page and frames it in a 3D device mockup into the site's library. estimateOnly answers 200 {estimate:true, credits:10} without charging; otherwise 10 credits are debited and 202 {estimate:false, renderId, status:'pending', sourceUrl, credits} is returned. 402 when credits are short, 501 when no browser is configured, 502 when the render queue is down (nothing charged).",
          security: bearer,
          tags: ["screenshots"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId/media/screenshot/:renderId",
      async ({ request, params }) => {
        const principal = await guard(request, "content:write");
        return getRender(deps, principal, params.siteId, params.renderId);
      },
      {
        ...guard.hook("content:write"),
        response: { 200: RenderSchema, ...errors(401, 403, 404) },
        detail: {
          summary: "Poll a screenshot render",
          description:
            "pending (imageUrl null), done (imageUrl, width, height, warnings) or failed (error set, credits refunded).",
          security: bearer,
          tags: ["screenshots"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/screenshot-login",
      async ({ request, params, body, set }) => {
        const principal = await guard(request, "content:write");
        const link = await createLoginLink(deps, principal, params.siteId, body);
        set.status = 201;
        return link;
      },
      {
        ...guard.hook("content:write"),
        body: t.Object({ url: t.String({ description: "the login-gated page" }) }),
        response: { 201: LoginSession, ...errors(400, 401, 403, 404) },
        detail: {
          summary: "Create a sign-in link for login-gated pages (free)",
          description:
            "The owner opens loginUrl, signs in on a hosted browser and presses Done; the session is stored encrypted against the site and later screenshots start with it. Then repeat the screenshot POST with recapture true.",
          security: bearer,
          tags: ["screenshots"],
        },
      },
    );
}
