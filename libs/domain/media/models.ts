import { type Static, Type } from "@sinclair/typebox";
import { MAX_MEDIA_BYTES } from "@site/storage";

// One model per shape: the API route, the MCP tool and the TypeScript type all read these.

/** The body of POST …/media/upload. */
export const UploadBody = Type.Object({
  contentType: Type.String({ description: "image/jpeg, image/png, image/webp or image/gif" }),
  size: Type.Integer({ minimum: 1, maximum: MAX_MEDIA_BYTES }),
});
/** An upload request that passed its model. */
export type UploadBody = Static<typeof UploadBody>;

/** The spec's upload preparation result. */
export const UploadPreparation = Type.Object({
  upload: Type.Object({
    url: Type.String(),
    method: Type.Literal("PUT"),
    headers: Type.Record(Type.String(), Type.String()),
    expiresInSeconds: Type.Integer({ examples: [7200] }),
  }),
  publicUrl: Type.String(),
  path: Type.String({ examples: ["site-media/<site_id>/<name>"] }),
  name: Type.String(),
  mediaType: Type.Literal("image"),
  maxBytes: Type.Integer({ examples: [MAX_MEDIA_BYTES] }),
});
/** The spec's upload preparation result. */
export type UploadPreparation = Static<typeof UploadPreparation>;

/** The body of POST …/media/import-url (and the import_media_from_url tool, with a siteId). */
export const ImportUrlBody = Type.Object({
  url: Type.String({
    description: "public https:// URL of the image; private, loopback and link-local hosts are refused",
  }),
  alt: Type.Optional(
    Type.Union([
      Type.String({
        maxLength: 1000,
        description: "alternative text describing the image, stored with the file and used in the embed",
      }),
      Type.Null(),
    ]),
  ),
});
/** An import request that passed its model. */
export type ImportUrlBody = Static<typeof ImportUrlBody>;

/** A library image as the API answers it. */
export const MediaImage = Type.Object({
  id: Type.String({ format: "uuid", description: "the file's id: DELETE …/media/<id> removes it" }),
  name: Type.String(),
  url: Type.String({ description: "canonical /api/media/<key> path: persist this in page content" }),
  displayUrl: Type.String({
    description: "the same path with a short-lived member grant; preview only, never persist",
  }),
  createdAt: Type.String({ examples: ["2026-11-22T18:30:00.123Z"] }),
  size: Type.Integer(),
});
/** A library image as the API answers it. */
export type MediaImage = Static<typeof MediaImage>;
