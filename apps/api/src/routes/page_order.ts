import { getOwnSite, listPages, PageList, PageOrderBody, reorderPages } from "@site/domain/sites";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/** PUT …/pages/order: the order of a site's pages, as one atomic write. */
export function pageOrderRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia().use(auth).put(
    "/api/v1/sites/:siteId/pages/order",
    async ({ principal, params, body }) => {
      const site = await getOwnSite(deps, principal, params.siteId);
      await reorderPages(deps, site, body);
      return { pages: await listPages(deps, site) };
    },
    {
      operation: "reorderPages",
      scope: "content:write",
      body: PageOrderBody,
      response: { 200: PageList, ...errors(400, 404) },
      detail: {
        summary: "Reorder a site's pages",
        description:
          "pageIds must be exactly the site's pages, each once: otherwise 400 naming the missing, unknown and repeated ids, and nothing changes. Positions become 0..n-1. Concurrent reorders and page creates run one after another; positions stay unique (a database constraint).",
        tags: ["pages"],
      },
    },
  );
}
