import { type Static, Type } from "@sinclair/typebox";
import { named, pageOf, SignedUpload } from "@site/domain/core";
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
export const UploadPreparation = named(
  "UploadPreparation",
  Type.Object({
    upload: SignedUpload,
    publicUrl: Type.String(),
    path: Type.String({ examples: ["site-media/<site_id>/<name>"] }),
    name: Type.String(),
    mediaType: Type.Literal("image"),
    maxBytes: Type.Integer({ examples: [MAX_MEDIA_BYTES] }),
  }),
);
/** The spec's upload preparation result. */
export type UploadPreparation = Static<typeof UploadPreparation>;

/** The longest URL an import takes (REST and MCP alike). */
export const IMPORT_URL_MAX_LENGTH = 2048;

/**
 * The body of POST …/media/import-url and the import_media_from_url tool's arguments (with a siteId):
 * one model, so both refuse the same URL with the same error (the scheme and host are the domain's
 * check, `importFromUrl`, for both).
 */
export const ImportUrlBody = Type.Object({
  url: Type.String({
    maxLength: IMPORT_URL_MAX_LENGTH,
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
export const MediaImage = named(
  "MediaImage",
  Type.Object({
    id: Type.String({ format: "uuid", description: "the file's id: DELETE …/media/<id> removes it" }),
    name: Type.String(),
    url: Type.String({ description: "canonical /api/media/<key> path: persist this in page content" }),
    displayUrl: Type.String({
      description: "the same path with a short-lived member grant; preview only, never persist",
    }),
    createdAt: Type.String({ examples: ["2026-11-22T18:30:00.123Z"] }),
    size: Type.Integer(),
  }),
);
/** A library image as the API answers it. */
export type MediaImage = Static<typeof MediaImage>;

/**
 * A file just added to a site's library: the answer of a completed signed upload, of a URL import
 * (REST) and of the import_media_from_url and upload_media tools (MCP).
 */
export const AddedMediaFile = named(
  "AddedMediaFile",
  Type.Object({
    publicUrl: Type.String({ description: "the canonical /api/media/<key> path, the same as url" }),
    path: Type.String({ examples: ["site-media/<site_id>/<name>"], description: "the storage key" }),
    name: Type.String(),
    url: Type.String({ description: "canonical /api/media/<key> path: persist this in page content" }),
    size: Type.Integer({ description: "bytes" }),
    embed: Type.String({ description: "the image block page MDX embeds this file with" }),
  }),
);
/** A file just added to a site's library. */
export type AddedMediaFile = Static<typeof AddedMediaFile>;

/** A page of a site's media library, newest first. */
export const MediaLibraryPage = named("MediaLibraryPage", pageOf("images", MediaImage));
/** A page of a site's media library. */
export type MediaLibraryPage = Static<typeof MediaLibraryPage>;

/** The delete_media tool's answer (REST answers 204 with no body). */
export const MediaDeleted = named(
  "MediaDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    mediaId: Type.String({ format: "uuid", description: "the library file that is gone" }),
  }),
);
