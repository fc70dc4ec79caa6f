import { Type } from "@sinclair/typebox";
import {
  createLoginLink,
  getRender,
  LoginLinkBody,
  LoginLinkView,
  listStyleViews,
  type QueueAnswer,
  queueScreenshot,
  RENDER_WAIT_MAX_S,
  ScreenshotQueued,
  ScreenshotRequestBody,
  ScreenshotResult,
  StyleList,
  StyleListQuery,
  waitUntilEnded,
} from "@site/domain/screenshots";
import { getOwnSite } from "@site/domain/sites";
import { mediaEmbedSnippet, SiteId, UUID_PATTERN } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";
import { webhookFollows } from "./webhook_note.ts";

/** The events that report how a render ends. */
const SCREENSHOT_EVENTS = ["screenshot.completed", "screenshot.failed"] as const;

// The page URL as the models take it, with the limits a schema can state (2048 characters, http(s)).
const PageUrl = Type.String({
  ...ScreenshotRequestBody.properties.url,
  maxLength: 2048,
  pattern: "^https?://",
});

/** A done render whose page ended on a sign-in form carries this warning (render daemon's login detection). */
function signInWarning(warnings: string[] | undefined): string | undefined {
  return warnings?.find((w) => w.startsWith("login redirect:"));
}

/** Product screenshots in 3D device mockups: styles, renders, sign-in links. */
export const SCREENSHOT_TOOLS: Tool[] = [
  tool({
    name: "list_screenshot_styles",
    title: "List screenshot styles",
    description:
      "Lists the 3D device-mockup looks for product screenshots (metadata only). Pass a style's `id` as styleId to queue_screenshot; without it the default look is used. featured=true narrows to the curated gallery. Needs content:write.",
    operation: "listScreenshotStyles",
    output: StyleList,
    input: Type.Object({ siteId: SiteId, ...StyleListQuery.properties }),
    readOnly: true,
    run: async (deps, principal, args) => {
      await getOwnSite(deps, principal, args.siteId);
      const { siteId: _, ...query } = args;
      return { value: { styles: listStyleViews(deps.config.publicBaseUrl, query) } };
    },
  }),
  tool({
    name: "queue_screenshot",
    title: "Film a page into a device mockup",
    description:
      "Films a public web page with a headless browser and frames it in a 3D device mockup; the image lands in the site's media library. Costs 10 AI credits, debited now and refunded if the render fails; estimateOnly: true prices it for free. Answers a renderId: call get_screenshot with it and waitSeconds: 25 until status is done (a few seconds to a minute). Needs content:write. Errors: VALIDATION_ERROR (bad URL or option, private address), NOT_FOUND (unknown styleId), QUOTA_EXCEEDED (credits), NOT_CONFIGURED (no browser on this server), RENDERER_ERROR (queue down; nothing charged). When the organization has webhooks for screenshot.completed or screenshot.failed, the result lists them under `webhooks` (their URLs only for a key with webhooks:write): they will be told how it ends.",
    operation: "queueScreenshot",
    output: ScreenshotQueued,
    input: Type.Object({ siteId: SiteId, ...ScreenshotRequestBody.properties, url: PageUrl }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args, work) => {
      const { siteId, ...body } = args;
      if (body.estimateOnly) {
        const price = await queueScreenshot(deps, principal, siteId, body);
        return { value: price, note: `A screenshot costs ${price.credits} credits.` };
      }
      // Read before the work, so that the answer its transaction records is the one sent.
      const { webhooks, sentence } = await webhookFollows(deps, principal, SCREENSHOT_EVENTS);
      const answer = (queued: QueueAnswer) => ({
        value: webhooks ? { ...queued, webhooks } : queued,
        note: `Queued render ${"renderId" in queued ? queued.renderId : ""} (${queued.credits} credits). Call get_screenshot with this renderId and waitSeconds: 25 until status is done.${sentence}`,
      });
      return answer(await queueScreenshot(deps, principal, siteId, body, work?.inWork(answer)));
    },
  }),
  tool({
    name: "get_screenshot",
    title: "Wait for a screenshot render",
    description:
      "Where a render stands: pending, done (imageUrl: the library url to put in page content; displayUrl: a short-lived preview link, never to be stored; width, height, warnings) or failed (error; credits refunded). waitSeconds (0–25, default 0) waits on the server until the render is no longer pending. When a warning says the page redirected to a sign-in form, the result's nextStep says how to sign in and film again. Free. Needs content:write.",
    operation: "getScreenshot",
    output: ScreenshotResult,
    input: Type.Object({
      siteId: SiteId,
      renderId: Type.String({ pattern: UUID_PATTERN, maxLength: 36, description: "from queue_screenshot" }),
      waitSeconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: RENDER_WAIT_MAX_S,
          description: "wait up to this long (0-25, default 0) for it to finish",
        }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const render = await waitUntilEnded(
        deps.renderWaits,
        args.renderId,
        args.waitSeconds ?? 0,
        () => getRender(deps, principal, args.siteId, args.renderId),
        (r) => r.status === "pending",
      );
      if (render.status !== "done" || !render.imageUrl) {
        return {
          value: render,
          note:
            render.status === "pending"
              ? "Still rendering; call get_screenshot again with waitSeconds: 25."
              : `The render failed: ${render.error}. The credits were refunded.`,
        };
      }
      const signIn = signInWarning(render.warnings);
      const nextStep = signIn
        ? `The image shows a sign-in screen, not the page. Call create_screenshot_login_link with url ${render.sourceUrl}, give its loginUrl to the site owner to sign in (valid about an hour), then call queue_screenshot again with the same url and recapture: true.`
        : undefined;
      const embed = mediaEmbedSnippet(render.imageUrl, "", { width: render.width, height: render.height });
      return {
        value: { ...render, embed, ...(nextStep ? { nextStep } : {}) },
        note:
          nextStep ?? `Done: ${render.imageUrl} is in the library; embed it in a page like this:\n\n${embed}`,
      };
    },
  }),
  tool({
    name: "create_screenshot_login_link",
    title: "Create a sign-in link for a login-gated page",
    description:
      "For a page behind a login: answers a loginUrl the site owner opens to sign in on a hosted browser (valid about one hour, usable once). The session is stored encrypted for the site; then queue_screenshot with recapture: true films the signed-in page. Free. Needs content:write.",
    operation: "createScreenshotLoginLink",
    output: LoginLinkView,
    input: Type.Object({ siteId: SiteId, ...LoginLinkBody.properties, url: PageUrl }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const link = await createLoginLink(deps, principal, args.siteId, { url: args.url });
      return {
        value: link,
        note: `Give this link to the site owner: ${link.loginUrl} (until ${link.expiresAt}). When they are done, call queue_screenshot with recapture: true.`,
      };
    },
  }),
];
