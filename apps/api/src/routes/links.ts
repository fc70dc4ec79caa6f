import {
  BrokenLinkList,
  getOwnSite,
  listBrokenLinks,
  TranslatedLinks,
  TranslateLinksBody,
  translateLinks,
} from "@site/domain/sites";
import { Elysia } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/** Links of a site: what hrefs name now, and which stored links name no page. */
export function linkRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .post(
      "/api/v1/sites/:siteId/links/translate",
      async ({ principal, params, body }) =>
        translateLinks(deps, await getOwnSite(deps, principal, params.siteId), body),
      {
        operation: "translateLinks",
        scope: "content:read",
        body: TranslateLinksBody,
        response: { 200: TranslatedLinks, ...errors(400, 404) },
        detail: {
          summary: "Say what hrefs name in a site now",
          description:
            "For each href (at most 1,000): a page (id and current path, from a site path or a page:<id> reference), a media file of the site (signed for you), an external URL, an in-page anchor, or broken. It reads only; content:read suffices.",
          tags: ["links"],
        },
      },
    )
    .get(
      "/api/v1/sites/:siteId/links/broken",
      async ({ principal, params }) =>
        listBrokenLinks(deps, await getOwnSite(deps, principal, params.siteId)),
      {
        operation: "listBrokenLinks",
        scope: "content:read",
        response: { 200: BrokenLinkList, ...errors(404) },
        detail: {
          summary: "List a site's broken links",
          description:
            "References to deleted pages and site paths naming no page, in page MDX, the layout's navigation and footer, and collection link fields.",
          tags: ["links"],
        },
      },
    );
}
