import { ListQuery } from "@site/domain/core";
import { ItemPage, PublicSite, readPublicItems, readPublicSite } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors, queryOf } from "../schemas.ts";

/** The public read of a published site (no token): layout, styles, chrome strings, collection items. */
export function publicSiteRoutes(deps: AppDeps) {
  return new Elysia()
    .use(operationMacros)
    .get(
      "/api/v1/public/sites/:slug",
      ({ params, query, request }) =>
        readPublicSite(deps, params.slug, {
          locale: query.locale || undefined,
          acceptLanguage: request.headers.get("accept-language"),
        }),
      {
        operation: "getPublicSite",
        public: true,
        query: t.Object({
          locale: t.Optional(t.String({ description: "BCP 47 tag; without it, Accept-Language decides" })),
        }),
        response: { 200: PublicSite, ...errors(400, 404) },
        detail: {
          summary: "A published site's layout, styles and chrome strings (404 while unpublished)",
          description:
            "Internal links come back as the pages' current paths, the logo signed with a visitor grant. The chrome locale is the one asked for (locale, else Accept-Language) among those the site has strings in, its language, else the site's default; each key falls back to the default locale and the built-in English.",
          tags: ["public"],
        },
      },
    )
    .get(
      "/api/v1/public/sites/:slug/collections/:key/items",
      ({ params, query }) => readPublicItems(deps, params.slug, params.key, query),
      {
        operation: "listPublicCollectionItems",
        public: true,
        query: queryOf(ListQuery),
        response: { 200: ItemPage, ...errors(400, 404) },
        detail: {
          summary:
            "A published site's collection items (images signed with visitor grants; 404 while unpublished)",
          tags: ["public"],
        },
      },
    );
}
