import { Elysia, t } from "elysia";
import {
  getOwnSite,
  importFromUrl,
  listLibrary,
  parseLimit,
  prepareUpload,
  settlePendingUploads,
} from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

const MediaImage = t.Object({
  name: t.String(),
  url: t.String({ description: "canonical /api/media/<key> path: persist this in page content" }),
  displayUrl: t.Optional(
    t.String({ description: "the same path with a short-lived member grant; preview only, never persist" }),
  ),
  createdAt: t.String({ examples: ["2026-11-22T18:30:00.123Z"] }),
  size: t.Integer(),
});

const UploadPreparation = t.Object({
  upload: t.Object({
    url: t.String(),
    method: t.Literal("PUT"),
    headers: t.Record(t.String(), t.String()),
    expiresInSeconds: t.Integer({ examples: [7200] }),
  }),
  publicUrl: t.String(),
  path: t.String({ examples: ["site-media/<site_id>/<name>"] }),
  name: t.String(),
  mediaType: t.Literal("image"),
  maxBytes: t.Integer({ examples: [10485760] }),
});

const Imported = t.Object({
  publicUrl: t.String(),
  path: t.String(),
  name: t.String(),
  url: t.String(),
  size: t.Integer(),
});

/** The media library of a site: list, signed upload, import from URL. */
export function mediaRoutes(deps: AppDeps, guard: Guard) {
  const site = async (request: Request, scope: "content:read" | "content:write", siteId: string) =>
    getOwnSite(deps, await guard(request, scope), siteId);
  return new Elysia()
    .get(
      "/api/v1/sites/:siteId/media",
      async ({ request, params, query }) => {
        const s = await site(request, "content:read", params.siteId);
        const limit = parseLimit(query.limit, 50, 100);
        await settlePendingUploads(deps, s.id);
        return listLibrary(deps, s.id, { cursor: query.cursor || undefined, limit });
      },
      {
        query: t.Object({ cursor: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        response: {
          200: t.Object({ images: t.Array(MediaImage), nextCursor: t.Union([t.String(), t.Null()]) }),
          ...errors(400, 401, 403, 404),
        },
        detail: {
          summary: "List the media library (newest first; limit default 50, max 100)",
          security: bearer,
          tags: ["media"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/upload",
      async ({ request, params, body, set }) => {
        const s = await site(request, "content:write", params.siteId);
        const out = await prepareUpload(deps, s.id, body);
        set.status = 201;
        return out;
      },
      {
        ...guard.hook("content:write"),
        body: t.Object({
          contentType: t.String({ description: "image/jpeg, image/png, image/webp or image/gif" }),
          size: t.Integer({ minimum: 1, maximum: 10485760 }),
        }),
        response: { 201: UploadPreparation, ...errors(400, 401, 403, 404, 429) },
        detail: {
          summary: "Prepare a signed upload; then PUT the bytes to upload.url with upload.headers",
          security: bearer,
          tags: ["media"],
        },
      },
    )
    .post(
      "/api/v1/sites/:siteId/media/import-url",
      async ({ request, params, body, set }) => {
        const s = await site(request, "content:write", params.siteId);
        const out = await importFromUrl(deps, s.id, body, { tls: deps.fetchTls });
        set.status = 201;
        return out;
      },
      {
        ...guard.hook("content:write"),
        body: t.Object({
          url: t.String({ description: "public https image URL" }),
          alt: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
        }),
        response: { 201: Imported, ...errors(400, 401, 403, 404, 429, 504) },
        detail: {
          summary: "Import an image from a public https URL (guarded fetch)",
          security: bearer,
          tags: ["media"],
        },
      },
    );
}
