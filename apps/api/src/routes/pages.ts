import { Elysia, t } from "elysia";
import { createPage, deletePage, getOwnSite, getPage, listPages, updatePage } from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { bearer, errors } from "../schemas.ts";

const Page = t.Object({
  id: t.String({ format: "uuid" }),
  path: t.String(),
  title: t.String(),
  content: t.String({ description: "MDX; images as Column > Column > Media with src = a library `url`" }),
  position: t.Integer(),
  updatedAt: t.String(),
});
const PageWrite = t.Object({ page: Page, warnings: t.Array(t.String()) });
const path = t.String({ description: "/ or /segment/…", examples: ["/about"] });

/** Pages of a site: path, title and MDX content. */
export function pageRoutes(deps: AppDeps, guard: Guard) {
  const site = async (request: Request, scope: "content:read" | "content:write", siteId: string) =>
    getOwnSite(deps, await guard(request, scope), siteId);
  return new Elysia()
    .get(
      "/api/v1/sites/:siteId/pages",
      async ({ request, params }) => ({
        pages: await listPages(deps, (await site(request, "content:read", params.siteId)).id),
      }),
      {
        response: { 200: t.Object({ pages: t.Array(Page) }), ...errors(401, 403, 404) },
        detail: { summary: "List pages", security: bearer, tags: ["pages"] },
      },
    )
    .post(
      "/api/v1/sites/:siteId/pages",
      async ({ request, params, body, set }) => {
        const s = await site(request, "content:write", params.siteId);
        const out = await createPage(deps, s.id, body);
        set.status = 201;
        return out;
      },
      {
        ...guard.hook("content:write"),
        body: t.Object({
          path,
          title: t.String({ maxLength: 200 }),
          content: t.String(),
          position: t.Optional(t.Integer()),
        }),
        response: { 201: PageWrite, ...errors(400, 401, 403, 404) },
        detail: {
          summary: "Create a page (media references must name real library files)",
          security: bearer,
          tags: ["pages"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ request, params }) => ({
        page: await getPage(deps, (await site(request, "content:read", params.siteId)).id, params.pageId),
      }),
      {
        response: { 200: t.Object({ page: Page }), ...errors(401, 403, 404) },
        detail: { summary: "Get a page", security: bearer, tags: ["pages"] },
      },
    )
    .patch(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ request, params, body }) =>
        updatePage(deps, (await site(request, "content:write", params.siteId)).id, params.pageId, body),
      {
        ...guard.hook("content:write"),
        body: t.Object({
          path: t.Optional(path),
          title: t.Optional(t.String({ maxLength: 200 })),
          content: t.Optional(t.String()),
          position: t.Optional(t.Integer()),
        }),
        response: { 200: PageWrite, ...errors(400, 401, 403, 404) },
        detail: { summary: "Update a page", security: bearer, tags: ["pages"] },
      },
    )
    .delete(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ request, params, set }) => {
        await deletePage(deps, (await site(request, "content:write", params.siteId)).id, params.pageId);
        set.status = 204;
        return null;
      },
      {
        response: { 204: t.Null(), ...errors(401, 403, 404) },
        detail: { summary: "Delete a page", security: bearer, tags: ["pages"] },
      },
    );
}
