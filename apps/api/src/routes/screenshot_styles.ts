import { join } from "node:path";
import { Elysia, t } from "elysia";
import {
  findStyle,
  getOwnSite,
  listStyleViews,
  notFound,
  parseFeaturedFlag,
  parseLimit,
  STYLE_LIMIT_DEFAULT,
  STYLE_LIMIT_MAX,
} from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

/** Where the committed preview images live (rendered by scripts/render_style_previews.ts). */
export const PREVIEW_DIR = join(import.meta.dir, "..", "..", "assets", "style-previews");

const StyleSchema = t.Object({
  id: t.String({ examples: ["laptop-studio"], description: "pass as styleId to POST …/media/screenshot" }),
  name: t.String(),
  description: t.String(),
  featured: t.Boolean(),
  author: t.String(),
  previewImageUrl: t.String({ description: "absolute URL of a preview rendered by this pipeline" }),
  previewSourceHost: t.String({ description: "the host filmed for the preview" }),
});

/** The screenshot style catalog: the per-site listing and the public preview images. */
export function screenshotStyleRoutes(deps: AppDeps, guard: Guard) {
  return new Elysia()
    .get(
      "/api/v1/sites/:siteId/media/screenshot-styles",
      async ({ request, params, query }) => {
        await getOwnSite(deps, await guard(request, "content:write"), params.siteId);
        const featured = parseFeaturedFlag(query.featured);
        const limit = parseLimit(query.limit, STYLE_LIMIT_DEFAULT, STYLE_LIMIT_MAX);
        return { styles: listStyleViews(deps.config.publicBaseUrl, { featured, limit }) };
      },
      {
        ...guard.hook("content:write"),
        query: t.Object({ featured: t.Optional(t.String()), limit: t.Optional(t.String()) }),
        response: { 200: t.Object({ styles: t.Array(StyleSchema) }), ...errors(400, 401, 403, 404) },
        detail: {
          summary: `List screenshot styles (featured=1: the curated gallery; limit default ${STYLE_LIMIT_DEFAULT}, max ${STYLE_LIMIT_MAX})`,
          security: bearer,
          tags: ["media"],
        },
      },
    )
    .get(
      "/api/v1/public/screenshot-styles/:styleId/preview",
      async ({ params, set }) => {
        const style = findStyle(params.styleId);
        if (!style) throw notFound("screenshot style");
        const file = Bun.file(join(PREVIEW_DIR, `${style.id}.webp`));
        if (!(await file.exists())) throw notFound("screenshot style preview");
        set.headers["content-type"] = "image/webp";
        set.headers["cache-control"] = "public, max-age=86400";
        return file;
      },
      {
        response: { 200: t.Any({ description: "image/webp" }), ...errors(404) },
        detail: { summary: "A style's preview image (public, cacheable)", tags: ["media"] },
      },
    );
}
