import {
  createLoginLink,
  getRender,
  LoginLinkBody,
  LoginLinkView,
  QueueAnswer,
  queueScreenshot,
  RenderView,
  ScreenshotRequestBody,
  WaitQuery,
  waitUntilEnded,
} from "@site/domain/screenshots";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { answerInWork } from "../idempotency.ts";
import { errors, queryOf } from "../schemas.ts";

/** Screenshot renders and login links (spec: POST/GET media/screenshot, POST media/screenshot-login). */
export function screenshotRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .post(
      "/api/v1/sites/:siteId/media/screenshot",
      async ({ request, principal, params, body, set }) => {
        const answer = await queueScreenshot(
          deps,
          principal,
          params.siteId,
          body,
          answerInWork(request, 202, (a) => a),
        );
        set.status = answer.estimate ? 200 : 202;
        return answer;
      },
      {
        operation: "queueScreenshot",
        scope: "content:write",
        body: ScreenshotRequestBody,
        response: { 200: QueueAnswer, 202: QueueAnswer, ...errors(400, 402, 404, 501, 502) },
        detail: {
          summary: "Queue a screenshot render (10 credits) or price it",
          description:
            "Films the page and frames it in a 3D device mockup into the site's library. estimateOnly answers 200 {estimate:true, credits:10} without charging; otherwise 10 credits are debited and 202 {estimate:false, renderId, status:'pending', sourceUrl, credits} is returned. 402 when credits are short, 501 when no browser is configured, 502 when the render queue is down (nothing charged).",

          tags: ["screenshots"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId/media/screenshot/:renderId",
      async ({ principal, params, query }) =>
        waitUntilEnded(
          deps.renderWaits,
          params.renderId,
          query.waitSeconds ?? 0,
          () => getRender(deps, principal, params.siteId, params.renderId),
          (r) => r.status === "pending",
        ),
      {
        operation: "getScreenshot",
        scope: "content:write",
        query: queryOf(WaitQuery),
        response: { 200: RenderView, ...errors(400, 404) },
        detail: {
          summary: "Poll a screenshot render",
          description:
            "pending (imageUrl null), done (imageUrl, width, height, warnings) or failed (error set, credits refunded). With waitSeconds (at most 25) the answer comes when the render ends or the time is up, whichever is first: no polling loop needed.",

          tags: ["screenshots"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/screenshot-login",
      async ({ principal, params, body, set }) => {
        const link = await createLoginLink(deps, principal, params.siteId, body);
        set.status = 201;
        return link;
      },
      {
        operation: "createScreenshotLoginLink",
        scope: "content:write",
        body: LoginLinkBody,
        response: { 201: LoginLinkView, ...errors(400, 404) },
        detail: {
          summary: "Create a sign-in link for login-gated pages (free)",
          description:
            "The owner opens loginUrl, signs in on a hosted browser and presses Done; the session is stored encrypted against the site and later screenshots start with it. Then repeat the screenshot POST with recapture true.",

          tags: ["screenshots"],
        },
      },
    );
}
