import { Type } from "@sinclair/typebox";
import { ListQuery } from "@site/domain/core";
import { listSocialMedia, SocialMediaPage } from "@site/domain/social";
import { Cursor } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** The social media library of the organization. */
export const SOCIAL_TOOLS: Tool[] = [
  tool({
    name: "list_social_media",
    title: "List the social media library",
    description:
      "Lists the organization's social media files (images and MP4 videos for social posts), newest first. Pass their `id`s as `media` to create_social_post; each platform checks the combination (Instagram: 1 file or 2–10, JPEG images (PNG and WebP are converted); TikTok: 1–35 JPEG/WebP photos or one video; X: up to 4 images or one video; Threads: text, one file or up to 20; LinkedIn: text or images; Reddit: text or one image). `thumbnailUrl` is a short-lived signed preview, never to be stored. Needs social:write.",
    operation: "getSocialMedia",
    output: SocialMediaPage,
    input: Type.Object({ ...ListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => ({ value: await listSocialMedia(deps, principal, args) }),
  }),
];
