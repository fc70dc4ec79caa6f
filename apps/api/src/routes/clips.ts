import {
  ClipQueueAnswer,
  ClipRequestBody,
  ClipView,
  getClip,
  queueClip,
  WaitQuery,
  waitUntilEnded,
} from "@site/domain/screenshots";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { answerInWork } from "../idempotency.ts";
import { errors, queryOf } from "../schemas.ts";

/** Device clips (CONTRACT "Device clips"): POST /api/v1/social/media/clips, polled at GET …/clips/<clipId>. */
export function clipRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .post(
      "/api/v1/social/media/clips",
      async ({ request, principal, body, set }) => {
        const answer = await queueClip(
          deps,
          principal,
          body,
          answerInWork(request, 202, (a) => a),
        );
        set.status = "estimate" in answer ? 200 : 202;
        return answer;
      },
      {
        operation: "queueClip",
        scope: "social:write",
        body: ClipRequestBody,
        response: {
          200: ClipQueueAnswer,
          202: ClipQueueAnswer,
          ...errors(400, 402, 404, 501, 502, 503),
        },
        detail: {
          summary: "Queue a device clip (an MP4 of the page scrolling inside a moving device) or price it",
          description:
            "Films the page once (same guard, settling and capture options as screenshots), scrolls it inside the style's device with the chosen motion and encodes an H.264 MP4 (yuv420p, faststart, no audio) and a poster (its first frame). estimateOnly answers 200 {estimate:true, credits} without charging; otherwise CLIP_CREDITS (default 30) are debited and 202 {clipId, status:'pending', credits} is returned; refunded if the clip fails. Done, the clip is listed in the social media library as kind video. 402 when credits are short, 404 for an unknown style, 501 when no browser or no FFmpeg is configured.",
          tags: ["social"],
        },
      },
    )
    .get(
      "/api/v1/social/media/clips/:clipId",
      async ({ principal, params, query }) =>
        waitUntilEnded(
          deps.renderWaits,
          params.clipId,
          query.waitSeconds ?? 0,
          () => getClip(deps, principal, params.clipId),
          (c) => c.status === "pending",
        ),
      {
        operation: "getClip",
        scope: "social:write",
        query: queryOf(WaitQuery),
        response: { 200: ClipView, ...errors(400, 404) },
        detail: {
          summary: "Poll a device clip",
          description:
            "pending; done (media: the social library's video entry, posterUrl with a short-lived member grant, warnings); or failed (error set, credits refunded). With waitSeconds (at most 25) the answer comes when the clip ends or the time is up, whichever is first.",
          tags: ["social"],
        },
      },
    );
}
