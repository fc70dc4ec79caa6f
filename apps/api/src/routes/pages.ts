import { admitPageWrite } from "@site/domain/content";
import { hashSecret } from "@site/domain/core";
import {
  CreatePageBody,
  createPage,
  deletePage,
  getOwnSite,
  getPage,
  listPages,
  PageAnswer,
  PageList,
  PageWrite,
  UpdatePageBody,
  updatePage,
} from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

const PAGE_WRITE = /^\/api\/v1\/sites\/[^/]+\/pages(?:\/[^/]+)?\/?$/;

/**
 * Runs on each request, before routing and before a body is read; for a page write (POST or PATCH of
 * …/pages): an organization over its share of the parser pool is refused
 * at once (429 with Retry-After, decision 0612), so a flood of refused writes costs a header check.
 * Only a key the key cache already knows is looked at (nothing is counted or queried here); any other
 * request goes on to be parsed, authenticated and checked as usual.
 */
function admitBeforeBody(deps: AppDeps) {
  return ({ request }: { request: Request }): void => {
    if (request.method !== "POST" && request.method !== "PATCH") return;
    const url = request.url;
    if (!url.includes("/pages")) return;
    if (!PAGE_WRITE.test(new URL(url).pathname)) return;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
    const known = bearer ? deps.keys?.get(hashSecret(bearer[1]!)) : undefined;
    if (known) admitPageWrite(known.orgId);
  };
}

/** Pages of a site: path, title and MDX content. */
export function pageRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .onRequest(admitBeforeBody(deps))
    .use(auth)
    .get(
      "/api/v1/sites/:siteId/pages",
      async ({ principal, params }) => ({
        pages: await listPages(deps, await getOwnSite(deps, principal, params.siteId)),
      }),
      {
        operation: "listPages",
        scope: "content:read",
        response: { 200: PageList, ...errors(404) },
        detail: { summary: "List pages", tags: ["pages"] },
      },
    )
    .post(
      "/api/v1/sites/:siteId/pages",
      async ({ principal, params, body, set }) => {
        const s = await getOwnSite(deps, principal, params.siteId);
        const out = await createPage(deps, s, body);
        set.status = 201;
        return out;
      },
      {
        operation: "createPage",
        scope: "content:write",
        body: CreatePageBody,
        response: { 201: PageWrite, ...errors(400, 404, 429) },
        detail: {
          summary: "Create a page (media references must name real library files)",
          tags: ["pages"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ principal, params }) => ({
        page: await getPage(deps, await getOwnSite(deps, principal, params.siteId), params.pageId),
      }),
      {
        operation: "getPage",
        scope: "content:read",
        response: { 200: PageAnswer, ...errors(404) },
        detail: { summary: "Get a page", tags: ["pages"] },
      },
    )
    .patch(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ principal, params, body }) =>
        updatePage(deps, await getOwnSite(deps, principal, params.siteId), params.pageId, body),
      {
        operation: "updatePage",
        scope: "content:write",
        body: UpdatePageBody,
        response: { 200: PageWrite, ...errors(400, 404, 429) },
        detail: { summary: "Update a page", tags: ["pages"] },
      },
    )
    .delete(
      "/api/v1/sites/:siteId/pages/:pageId",
      async ({ principal, params, set }) => {
        await deletePage(deps, await getOwnSite(deps, principal, params.siteId), params.pageId);
        set.status = 204;
        return null;
      },
      {
        operation: "deletePage",
        scope: "content:write",
        response: { 204: t.Null(), ...errors(404) },
        detail: { summary: "Delete a page", tags: ["pages"] },
      },
    );
}
