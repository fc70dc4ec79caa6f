import { Type } from "@sinclair/typebox";
import {
  type ClipQueueAnswer,
  ClipQueued,
  ClipRequestBody,
  ClipView,
  getClip,
  queueClip,
  RENDER_WAIT_MAX_S,
  waitUntilEnded,
} from "@site/domain/screenshots";
import { UUID_PATTERN } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";
import { webhookFollows } from "./webhook_note.ts";

/** The events that report how a clip ends. */
const CLIP_EVENTS = ["clip.completed", "clip.failed"] as const;

/** The longest a get_clip call waits for a clip to finish before answering it still pending. */
export const CLIP_WAIT_MAX_S = RENDER_WAIT_MAX_S;

/** Device clips: an MP4 of a page scrolling inside a moving device, for the social media library. */
export const CLIP_TOOLS: Tool[] = [
  tool({
    name: "create_clip",
    title: "Make a device clip (MP4) of a page",
    description:
      "Films a public web page once and makes an MP4 of it scrolling inside a 3D device (motion: scroll, scroll-tilt or orbit), H.264 1080×1350 by default, ready to post as a video; it lands in the social media library. Costs 30 AI credits, debited now and refunded if it fails; estimateOnly: true prices it for free. Answers a clipId: call get_clip with waitSeconds (up to 25) until status is done, then post its media.id. Needs social:write. Errors: VALIDATION_ERROR, NOT_FOUND (unknown styleId), QUOTA_EXCEEDED (credits), NOT_CONFIGURED (no browser or FFmpeg on this server). When the organization has webhooks for clip.completed or clip.failed, the result lists them under `webhooks` (their URLs only for a key with webhooks:write): they will be told how it ends.",
    operation: "queueClip",
    output: ClipQueued,
    input: Type.Object({
      ...ClipRequestBody.properties,
      url: Type.String({ ...ClipRequestBody.properties.url, maxLength: 2048, pattern: "^https?://" }),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args, work) => {
      if (args.estimateOnly) {
        const price = await queueClip(deps, principal, args);
        return { value: price, note: `A device clip costs ${price.credits} credits.` };
      }
      // Read before the work, so that the answer its transaction records is the one sent.
      const { webhooks, sentence } = await webhookFollows(deps, principal, CLIP_EVENTS);
      const answer = (queued: ClipQueueAnswer) => {
        const clipId = "clipId" in queued ? queued.clipId : "";
        return {
          value: webhooks ? { ...queued, webhooks } : queued,
          note: `Queued clip ${clipId} (${queued.credits} credits). Call get_clip with this clipId and waitSeconds: 25 until status is done.${sentence}`,
        };
      };
      return answer(await queueClip(deps, principal, args, work?.inWork(answer)));
    },
  }),
  tool({
    name: "get_clip",
    title: "Wait for a device clip",
    description:
      "Where a clip stands: pending, done (media: the social library's video entry, whose id a post's media takes; posterUrl: a short-lived preview of its first frame, never to be stored; warnings) or failed (error; credits refunded). waitSeconds (0–25, default 0) waits on the server until the clip is no longer pending. Free. Needs social:write.",
    operation: "getClip",
    output: ClipView,
    input: Type.Object({
      clipId: Type.String({ pattern: UUID_PATTERN, maxLength: 36, description: "from create_clip" }),
      waitSeconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: CLIP_WAIT_MAX_S,
          description: "wait up to this long for it to finish",
        }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const clip = await waitUntilEnded(
        deps.renderWaits,
        args.clipId,
        args.waitSeconds ?? 0,
        () => getClip(deps, principal, args.clipId),
        (c) => c.status === "pending",
      );
      return {
        value: clip,
        note:
          clip.status === "pending"
            ? "Still rendering; call get_clip again with waitSeconds: 25."
            : clip.status === "failed"
              ? `The clip failed: ${clip.error}. The credits were refunded.`
              : `Done: media ${clip.media?.id} (video ${clip.width}×${clip.height}, ${clip.durationS} s) is in the social media library; pass its id in a post's media.`,
      };
    },
  }),
];
