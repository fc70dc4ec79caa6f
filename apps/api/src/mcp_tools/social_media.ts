import { Type } from "@sinclair/typebox";
import {
  deleteSocialMedia,
  GeneratedSocialImages,
  GenerateImageBody,
  generateImages,
  RegisterSocialMediaBody,
  registerSocialMedia,
  SocialMediaAnswer,
  SocialMediaDeleted,
} from "@site/domain/social";
import { Id, MEDIA_PATH_PATTERN } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** The social media library beyond listing: the same models and domain functions as routes/social_media.ts. */
export const SOCIAL_MEDIA_TOOLS: Tool[] = [
  tool({
    name: "add_social_media",
    title: "Add a site's image to the social media library",
    description:
      "Puts a file of a site's media library (its `url`, /api/media/<key>, from list_media, import_media_from_url, upload_media or a done get_screenshot) into the organization's social media library, without copying it; adding it again answers the same entry. Pass the answer's media.id in `media` to create_social_post. VALIDATION_ERROR (url) for a path that is not a file of a site of this organization. Needs social:write.",
    operation: "addSocialMedia",
    output: SocialMediaAnswer,
    input: Type.Object({
      url: Type.String({ ...RegisterSocialMediaBody.properties.url, pattern: MEDIA_PATH_PATTERN }),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const media = await registerSocialMedia(deps, principal, { url: args.url });
      return {
        value: { media },
        note: `Social library file ${media.id}; pass it in media to create_social_post.`,
      };
    },
  }),
  tool({
    name: "delete_social_media",
    title: "Delete a file of the social media library",
    description:
      "Removes a file from the social media library and frees its stored bytes (a site's file added with add_social_media is only unlisted: it stays in the site's library). CONFLICT while a post not yet published lists it (update_social_post or delete_social_post first); NOT_FOUND for an id that is not a listed file of the organization. Needs social:write.",
    operation: "deleteSocialMedia",
    output: SocialMediaDeleted,
    input: Type.Object({ mediaId: Id("a file of the social media library, from list_social_media") }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await deleteSocialMedia(deps, principal, args.mediaId);
      return {
        value: { deleted: true, mediaId: args.mediaId },
        note: `Social library file ${args.mediaId} is deleted; list_social_media shows the others.`,
      };
    },
  }),
  tool({
    name: "generate_social_images",
    title: "Generate images into the social media library",
    description:
      "Draws 1–4 images from a prompt with the server's image model into the social media library; answers them when they are stored (pass their ids in media to create_social_post). Costs AI credits per image (creditsCharged), debited first: QUOTA_EXCEEDED without enough; NOT_CONFIGURED when the server has no image model (nothing charged); RENDERER_ERROR when the provider fails (credits refunded). Pass idempotencyKey so a retried call is charged once. Needs social:write.",
    operation: "generateSocialImages",
    output: GeneratedSocialImages,
    input: GenerateImageBody,
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const out = await generateImages(deps, principal, args);
      return {
        value: out,
        note: `${out.media.length} image(s) for ${out.creditsCharged} credits: ${out.media.map((m) => m.id).join(", ")}; pass them in media to create_social_post.`,
      };
    },
  }),
];
