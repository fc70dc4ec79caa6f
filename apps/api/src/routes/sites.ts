import { ListQuery, requireSiteManager } from "@site/domain/core";
import {
  CreateSiteBody,
  createSite,
  deleteSite,
  getOwnSite,
  listSites,
  RenameSiteBody,
  renameSite,
  SiteAnswer,
  SitePage,
  setSitePublished,
} from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { answerInWork } from "../idempotency.ts";
import { errors, queryOf } from "../schemas.ts";

/** What creating a site can answer beyond the generic 400/401/403 (spec's error table). */
const CREATE_SITE_ERRORS = [
  "INVALID_SLUG",
  "RESERVED_SLUG",
  "LIMIT_EXCEEDED",
  "TEMPLATE_NOT_FOUND",
  "SLUG_TAKEN",
  "TEMPLATE_UNAVAILABLE",
  "TEMPLATE_SNAPSHOT_EMPTY",
  "TEMPLATE_CLONE_FAILED",
] as const;

/** Site creation (spec), listing and publish/unpublish (contract). */
export function siteRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia({ tags: ["sites"] } as never)
    .use(auth)
    .post(
      "/api/v1/sites",
      async ({ request, body, set, principal }) => {
        // A large template may take minutes to copy: lift the idle timeout for this request only.
        deps.liftTimeout?.(request);
        const site = await createSite(
          deps,
          principal,
          body,
          answerInWork(request, 201, (s) => ({ site: s })),
        );
        set.status = 201;
        return { site };
      },
      {
        operation: "createSite",
        scope: "sites:write",
        body: CreateSiteBody,
        response: { 201: SiteAnswer, ...errors(400, ...CREATE_SITE_ERRORS) },
        detail: {
          summary: "Create a site",
          description:
            "Scope sites:write; the key's creator must be an owner or admin. Without `template` the site starts with a welcome page and the default layout; with one, pages, layout and styles of the live template host are cloned (media references, not files). May take up to 300 s for large templates.",
          tags: ["sites"],
        },
      },
    )
    .get(
      "/api/v1/sites",
      async ({ principal, query }) => {
        return listSites(deps, principal, query);
      },
      {
        operation: "listSites",
        scope: "content:read",
        query: queryOf(ListQuery),
        response: {
          200: SitePage,
          ...errors(400),
        },
        detail: {
          summary: "List the organization's sites (newest first)",
          description:
            "Scope content:read: listing sites is reading, as reading one site is (decision 0750).",
          tags: ["sites"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId",
      async ({ principal, params }) => {
        const { orgId: _o, clonedFromSiteId: _c, ...site } = await getOwnSite(deps, principal, params.siteId);
        return { site };
      },
      {
        operation: "getSite",
        anyKey: true,
        response: { 200: SiteAnswer, ...errors(404) },
        detail: {
          summary: "Read one site",
          description: "Any key of the organization. A deleted site answers 404.",
          tags: ["sites"],
        },
      },
    )
    .patch(
      "/api/v1/sites/:siteId",
      async ({ principal, params, body }) => ({
        site: await renameSite(deps, principal, params.siteId, body),
      }),
      {
        operation: "renameSite",
        scope: "sites:write",
        body: RenameSiteBody,
        response: { 200: SiteAnswer, ...errors(400, 404) },
        detail: {
          summary: "Rename a site",
          description:
            "Scope sites:write; the key's creator must be an owner or admin (as for creating a site).",
          tags: ["sites"],
        },
      },
    )
    .delete(
      "/api/v1/sites/:siteId",
      async ({ principal, params, set }) => {
        await deleteSite(deps, principal, params.siteId);
        set.status = 204;
      },
      {
        operation: "deleteSite",
        scope: "sites:write",
        response: { 204: t.Void(), ...errors(404, 409) },
        detail: {
          summary: "Delete a site (soft delete; the slug is freed after SITE_DELETE_GRACE_S)",
          description:
            "Scope sites:write; the key's creator must be an owner or admin. At once the site answers 404 everywhere (its pages, media, public reads, delivery of its files) and leaves the list and the site limit; its files' bytes go back to the organization's storage quota and its campaigns still to go out are cancelled. Its slug stays taken for SITE_DELETE_GRACE_S (default 7 days), then the site is purged. 409 CONFLICT while a gallery template names it.",
          tags: ["sites"],
        },
      },
    )
    .use(publishRoute(deps, auth, "publish"))
    .use(publishRoute(deps, auth, "unpublish"));
}

/** POST /sites/:id/publish or /unpublish; unpublishing revokes visitor access to the site's media at once. */
function publishRoute(deps: AppDeps, auth: AuthMacros, action: "publish" | "unpublish") {
  const live = action === "publish";
  return new Elysia().use(auth).post(
    `/api/v1/sites/:siteId/${action}`,
    async ({ principal, params }) => {
      requireSiteManager(principal);
      const site = await getOwnSite(deps, principal, params.siteId);
      return { site: await setSitePublished(deps, site, live) };
    },
    {
      operation: live ? "publishSite" : "unpublishSite",
      scope: "sites:write",
      response: { 200: SiteAnswer, ...errors(404) },
      detail: {
        summary: live
          ? "Publish a site (visitor grants start to open its media)"
          : "Unpublish a site (revokes visitor access to its media at once)",
        tags: ["sites"],
      },
    },
  );
}
