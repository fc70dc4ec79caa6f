import { ListQuery, SignedUpload } from "@site/domain/core";
import {
  deleteSocialMedia,
  GeneratedSocialImages,
  GenerateImageBody,
  generateImages,
  listSocialMedia,
  prepareSocialUpload,
  RegisterSocialMediaBody,
  registerSocialMedia,
  SocialMediaAnswer,
  SocialMediaPage,
  SocialMediaView,
  SocialUploadBody,
} from "@site/domain/social";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

/** The social media library: list, register a site file, signed upload, image generation, delete. */
export function socialMediaRoutes(deps: AppDeps, auth: AuthMacros) {
  const detail = (summary: string, description?: string) => ({ summary, description, tags: ["social"] });
  return new Elysia()
    .use(auth)
    .get("/api/v1/social/media", async ({ principal, query }) => listSocialMedia(deps, principal, query), {
      operation: "listSocialMedia",
      scope: "social:write",
      query: queryOf(ListQuery),
      response: {
        200: SocialMediaPage,
        ...errors(400),
      },
      detail: detail(
        "List the social media library (newest first)",
        "Files that landed and passed the type check; `url` is the bare /api/media path, `thumbnailUrl` the same with a short-lived member grant.",
      ),
    })
    .post(
      "/api/v1/social/media",
      async ({ principal, body, set }) => {
        const media = await registerSocialMedia(deps, principal, body);
        set.status = 201;
        return { media };
      },
      {
        operation: "addSocialMedia",
        scope: "social:write",
        body: RegisterSocialMediaBody,
        response: { 201: SocialMediaAnswer, ...errors(400) },
        detail: detail(
          "Register a site library file in the social media library",
          "`url` is a /api/media/<key> path of a site of the organization; the file is not copied. Registering it again answers the same entry.",
        ),
      },
    )
    .delete(
      "/api/v1/social/media/:mediaId",
      async ({ principal, params, set }) => {
        await deleteSocialMedia(deps, principal, params.mediaId);
        set.status = 204;
        return null;
      },
      {
        operation: "deleteSocialMedia",
        scope: "social:write",
        response: { 204: t.Null(), ...errors(404, "CONFLICT", 503) },
        detail: detail(
          "Delete a file of the social media library",
          "Removes it from the library and deletes its stored bytes (and the JPEG made from it for JPEG-only platforms), giving their size back to the organization's storage quota. A registered site library file is only unlisted here: its bytes stay with the site. 404 for an id that is not a listed file of the organization; 409 CONFLICT while a post not yet published lists it (a published post's file may go).",
        ),
      },
    )
    .post(
      "/api/v1/social/media/upload",
      async ({ principal, body, set }) => {
        const out = await prepareSocialUpload(deps, principal, body);
        set.status = 201;
        return out;
      },
      {
        operation: "prepareSocialMediaUpload",
        scope: "social:write",
        body: SocialUploadBody,
        response: {
          201: t.Object({
            media: SocialMediaView,
            upload: SignedUpload,
          }),
          ...errors(400),
        },
        detail: detail(
          "Prepare a signed upload into the social media library",
          "PUT the bytes to `upload.url` with exactly `upload.headers`. Images (JPEG, PNG, WebP, GIF) up to 10485760 bytes, MP4 up to SOCIAL_VIDEO_MAX_BYTES; the type is checked from the bytes when they land, and the file is listed only then. Counted against the organization's storage quota (403 when it would be exceeded).",
        ),
      },
    )
    .post(
      "/api/v1/social/media/generate",
      async ({ principal, body, set }) => {
        const out = await generateImages(deps, principal, body);
        set.status = 201;
        return out;
      },
      {
        operation: "generateSocialImages",
        scope: "social:write",
        body: GenerateImageBody,
        response: {
          201: GeneratedSocialImages,
          ...errors(400, 402, 501, 502),
        },
        detail: detail(
          "Generate images into the social media library",
          "An OpenAI-compatible images endpoint (IMAGE_API_BASE, IMAGE_API_KEY, IMAGE_MODEL). Costs IMAGE_CREDITS_PER_IMAGE (default 10) AI credits per image, debited when the request is recorded: 402 QUOTA_EXCEEDED without enough; 501 NOT_CONFIGURED without IMAGE_API_BASE (nothing charged); 502 RENDERER_ERROR when the provider fails (credits refunded, once); 403 when the storage quota is full (refunded).",
        ),
      },
    );
}
