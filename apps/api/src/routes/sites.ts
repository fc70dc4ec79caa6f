import { Elysia, t } from "elysia";
import {
  createSite,
  getOwnSite,
  listSites,
  parseLimit,
  requireSiteManager,
  setSitePublished,
} from "@site/domain";
import type { AppDeps } from "../deps.ts";
import type { Guard } from "../guard.ts";
import { SiteSchema, bearer, errors } from "../schemas.ts";

/** Site creation (spec), listing and publish/unpublish (contract). */
export function siteRoutes(deps: AppDeps, guard: Guard) {
  return new Elysia({ tags: ["sites"] } as never)
    .post(
      "/api/v1/sites",
      async ({ request, body, set, server }) => {
        // A large template may take minutes to copy: lift the idle timeout for this request only.
        server?.timeout(request, 0);
        const principal = await guard(request, "sites:write");
        const site = await createSite(deps, principal, body);
        set.status = 201;
        return { site };
      },
      {
        ...guard.hook("sites:write"),
        body: t.Object({
          name: t.String({ description: "human-readable, at most 100 characters" }),
          slug: t.String({
            description: "preview subdomain: lowercase letters, digits, hyphens (DNS label)",
          }),
          template: t.Optional(
            t.String({ description: "marketplace template slug from GET /api/v1/templates" }),
          ),
        }),
        response: { 201: t.Object({ site: SiteSchema }), ...errors(400, 401, 403, 404, 409, 410, 422, 500) },
        detail: {
          summary: "Create a site",
          description:
            "Scope sites:write; the key's creator must be an owner or admin. Without `template` the site starts with a welcome page and the default layout; with one, pages, layout and styles of the live template host are cloned (media references, not files). May take up to 300 s for large templates.",
          security: bearer,
          tags: ["sites"],
        },
      },
    )
    .get(
      "/api/v1/sites",
      async ({ request, query }) => {
        const principal = await guard(request, "sites:write");
        return listSites(deps, principal, { cursor: query.cursor, limit: parseLimit(query.limit, 50, 100) });
      },
      {
        ...guard.hook("sites:write"),
        query: t.Object({
          cursor: t.Optional(t.String()),
          limit: t.Optional(t.String({ description: "1..100, default 50" })),
        }),
        response: {
          200: t.Object({ sites: t.Array(SiteSchema), nextCursor: t.Nullable(t.String()) }),
          ...errors(400, 401, 403),
        },
        detail: {
          summary: "List the organization's sites (newest first)",
          security: bearer,
          tags: ["sites"],
        },
      },
    )
    .use(publishRoute(deps, guard, "publish"))
    .use(publishRoute(deps, guard, "unpublish"));
}

/** POST /sites/:id/publish or /unpublish; unpublishing revokes visitor access to the site's media at once. */
function publishRoute(deps: AppDeps, guard: Guard, action: "publish" | "unpublish") {
  const live = action === "publish";
  return new Elysia().post(
    `/api/v1/sites/:siteId/${action}`,
    async ({ request, params }) => {
      const principal = await guard(request, "sites:write");
      requireSiteManager(principal);
      const site = await getOwnSite(deps, principal, params.siteId);
      return { site: await setSitePublished(deps, site.id, live) };
    },
    {
      response: { 200: t.Object({ site: SiteSchema }), ...errors(401, 403, 404) },
      detail: {
        summary: live
          ? "Publish a site (visitor grants start to open its media)"
          : "Unpublish a site (revokes visitor access to its media at once)",
        security: bearer,
        tags: ["sites"],
      },
    },
  );
}
