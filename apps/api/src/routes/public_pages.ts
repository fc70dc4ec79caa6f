import { readPublicPage, readPublicPages } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import { operationMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

const PublicPage = t.Object({
  id: t.String(),
  path: t.String(),
  title: t.String(),
  content: t.String({
    description:
      "MDX sanitized for renderers (no ESM, expressions, script-capable elements, event handlers or script URLs; empty when the stored content does not parse) with each media reference to a file of this site (or its template host) signed with a visitor grant; any other reference stays unsigned",
  }),
  position: t.Integer(),
});

/** Published pages for visitors (no token): stored media paths come back signed with visitor grants. */
export function publicPageRoutes(deps: AppDeps) {
  return new Elysia()
    .use(operationMacros)
    .get("/api/v1/public/sites/:slug/pages", ({ params }) => readPublicPages(deps, params.slug), {
      operation: "listPublicPages",
      public: true,
      response: {
        200: t.Object({ site: t.Object({ name: t.String(), slug: t.String() }), pages: t.Array(PublicPage) }),
        ...errors(404),
      },
      detail: { summary: "Pages of a published site (404 while unpublished)", tags: ["public"] },
    })
    .get(
      "/api/v1/public/sites/:slug/pages/:pageId",
      ({ params }) => readPublicPage(deps, params.slug, params.pageId),
      {
        operation: "getPublicPage",
        public: true,
        response: { 200: t.Object({ page: PublicPage }), ...errors(404) },
        detail: { summary: "One page of a published site (404 while unpublished)", tags: ["public"] },
      },
    );
}
