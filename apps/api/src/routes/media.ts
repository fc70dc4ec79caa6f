import { ListQuery } from "@site/domain/core";
import {
  AddedMediaFile,
  completeUpload,
  ImportUrlBody,
  importFromUrl,
  listOwnLibrary,
  MediaLibraryPage,
  prepareUpload,
  UploadBody,
  UploadPreparation,
} from "@site/domain/media";
import { deleteSiteMedia, getOwnSite } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { answerInWork } from "../idempotency.ts";
import { errors, queryOf } from "../schemas.ts";

/** The media library of a site: list, signed upload, import from URL, delete. */
export function mediaRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/sites/:siteId/media",
      // One round trip: the site's ownership and its page of files; uploads settle when they land (0803).
      async ({ principal, params, query }) => listOwnLibrary(deps, principal, params.siteId, query),
      {
        operation: "listMedia",
        scope: "content:read",
        query: queryOf(ListQuery),
        response: {
          200: MediaLibraryPage,
          ...errors(400, 404),
        },
        detail: {
          summary: "List the media library (newest first; limit default 50, max 100)",

          tags: ["media"],
        },
      },
    )
    .delete(
      "/api/v1/sites/:siteId/media/:mediaId",
      async ({ principal, params, set }) => {
        await deleteSiteMedia(deps, principal, params.siteId, params.mediaId);
        set.status = 204;
      },
      {
        operation: "deleteMedia",
        scope: "content:write",
        response: { 204: t.Void(), ...errors(404, 409, 503) },
        detail: {
          summary: "Delete a file of the media library",
          description:
            "`mediaId` is the file's `id` from the list. The file leaves the list, its delivery answers 404 and its bytes go back to the organization's storage quota. 409 CONFLICT while a page, the layout, a collection item, a campaign, a social library entry or template clones use it: `details.references` names each (`kind`: page, layout, collectionItem, campaign, socialMedia, clones).",
          tags: ["media"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/upload",
      async ({ principal, params, body, set }) => {
        const s = await getOwnSite(deps, principal, params.siteId);
        const out = await prepareUpload(deps, s, body);
        set.status = 201;
        return out;
      },
      {
        operation: "prepareMediaUpload",
        scope: "content:write",
        body: UploadBody,
        response: { 201: UploadPreparation, ...errors(400, 404, 429) },
        detail: {
          summary: "Prepare a signed upload; then PUT the bytes to upload.url with upload.headers",

          tags: ["media"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/upload/:name/complete",
      async ({ principal, params }) => {
        const s = await getOwnSite(deps, principal, params.siteId);
        return completeUpload(deps, s, params.name);
      },
      {
        operation: "completeMediaUpload",
        scope: "content:write",
        response: { 200: AddedMediaFile, ...errors(400, 404, 429, 503) },
        detail: {
          summary: "Complete a signed upload after its PUT: the file is listed once this answers 200",
          description:
            "`name` is the preparation's `name`. Idempotent. 400 when no bytes arrived yet, when they were refused (type, size, limits) or when the upload URL expired. Uploads also settle on their own: the local PUT lands them, the first read of the file does, and a background sweeper does.",
          tags: ["media"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/import-url",
      async ({ request, principal, params, body, set }) => {
        const s = await getOwnSite(deps, principal, params.siteId);
        const out = await importFromUrl(deps, s, body, {
          tls: deps.fetchTls,
          inWork: answerInWork(request, 201, (a) => a),
        });
        set.status = 201;
        return out;
      },
      {
        operation: "importMediaFromUrl",
        scope: "content:write",
        body: ImportUrlBody,
        response: { 201: AddedMediaFile, ...errors(400, "BLOCKED_HOST", 404, 429, 504) },
        detail: {
          summary: "Import an image from a public https URL (guarded fetch)",

          tags: ["media"],
        },
      },
    );
}
