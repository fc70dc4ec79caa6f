import { join } from "node:path";
import { notFound } from "@site/domain/core";
import { findStyle, listStyleViews, STYLE_LIMIT, StyleList, StyleListQuery } from "@site/domain/screenshots";
import { getOwnSite } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

/** Where the committed preview images live (rendered by scripts/render_style_previews.ts). */
export const PREVIEW_DIR = join(import.meta.dir, "..", "..", "assets", "style-previews");

/** The screenshot style catalog: the per-site listing and the public preview images. */
export function screenshotStyleRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/sites/:siteId/media/screenshot-styles",
      async ({ principal, params, query }) => {
        await getOwnSite(deps, principal, params.siteId);
        return { styles: listStyleViews(deps.config.publicBaseUrl, query) };
      },
      {
        operation: "listScreenshotStyles",
        scope: "content:write",
        query: queryOf(StyleListQuery),
        response: { 200: StyleList, ...errors(400, 404) },
        detail: {
          summary: `List screenshot styles (featured=1: the curated gallery; limit default ${STYLE_LIMIT.default}, max ${STYLE_LIMIT.max})`,

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
        operation: "getScreenshotStylePreview",
        public: true,
        response: { 200: t.Any({ description: "image/webp" }), ...errors(404) },
        detail: { summary: "A style's preview image (public, cacheable)", tags: ["media"] },
      },
    );
}
