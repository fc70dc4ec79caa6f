import { getLayout, getOwnSite, LayoutState, LayoutUpdate, updateLayout } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/** Layout (logo, navigation, footer) and styles of a site, with ETag/If-Match against lost updates. */
export function layoutRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/sites/:siteId/layout",
      async ({ principal, params, set }) => {
        const site = await getOwnSite(deps, principal, params.siteId);
        const { state, etag } = await getLayout(deps, site, "member");
        set.headers.etag = etag;
        return state;
      },
      {
        operation: "getSiteLayout",
        scope: "content:read",
        response: { 200: LayoutState, ...errors(404) },
        detail: {
          summary: "Read a site's layout and styles",
          description:
            "Internal links come back as the pages' current paths; the logo as a URL signed with a short-lived member grant. The ETag header is the version to send in If-Match.",
          tags: ["layout"],
        },
      },
    )
    .put(
      "/api/v1/sites/:siteId/layout",
      async ({ principal, params, body, request, set }) => {
        const site = await getOwnSite(deps, principal, params.siteId);
        const { state, etag } = await updateLayout(deps, site, body, {
          ifMatch: request.headers.get("if-match"),
        });
        set.headers.etag = etag;
        return state;
      },
      {
        operation: "replaceSiteLayout",
        scope: "content:write",
        body: LayoutUpdate,
        headers: t.Object({
          "if-match": t.Optional(t.String({ description: "the ETag of the layout you changed" })),
        }),
        response: { 200: LayoutState, ...errors(400, 404, 412) },
        detail: {
          summary: "Replace a site's layout, styles or both",
          description:
            "Send the ETag of your last read in If-Match: a stale one answers 412 PRECONDITION_FAILED and changes nothing. The logo is a bare /api/media/<key> path of this site's library (a signed URL read earlier is accepted and stored bare); navigation holds at most 100 items on two levels; a site path naming a page is stored as a page reference, so renaming the page keeps the link.",
          tags: ["layout"],
        },
      },
    );
}
