import {
  ChromeSettingsUpdate,
  ChromeStringsUpdate,
  ChromeView,
  getChrome,
  getOwnSite,
  setChromeSettings,
  setChromeStrings,
} from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errors } from "../schemas.ts";

/** Chrome strings: the words of a site's shell, per locale, over built-in English defaults. */
export function chromeRoutes(deps: AppDeps, auth: AuthMacros) {
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/sites/:siteId/chrome",
      async ({ principal, params, query }) => {
        const site = await getOwnSite(deps, principal, params.siteId);
        return getChrome(deps, site, query.locale || undefined);
      },
      {
        operation: "getChromeStrings",
        scope: "content:read",
        query: t.Object({
          locale: t.Optional(t.String({ description: "BCP 47 tag; default: the site's default locale" })),
        }),
        response: { 200: ChromeView, ...errors(400, 404) },
        detail: {
          summary: "Read a site's chrome strings in one locale",
          description:
            "Every key the shell uses (navigation, footer, coming-soon and not-found pages, cookie notice, newsletter form) with its text, falling back key by key: the locale, its language (de-CH → de), the site's default locale, the built-in English.",
          tags: ["chrome"],
        },
      },
    )
    .put(
      "/api/v1/sites/:siteId/chrome/:locale",
      async ({ principal, params, body }) => {
        const site = await getOwnSite(deps, principal, params.siteId);
        return setChromeStrings(deps, site, params.locale, body);
      },
      {
        operation: "setChromeStrings",
        scope: "content:write",
        body: ChromeStringsUpdate,
        response: { 200: ChromeView, ...errors(400, 404) },
        detail: {
          summary: "Set chrome strings of one locale (merged; null restores the default)",
          description:
            "Keys are dotted lower camel case (footer.copyright), values plain text of at most 2,000 characters: HTML and character references are refused. One bad key refuses the whole write, naming each.",
          tags: ["chrome"],
        },
      },
    )
    .patch(
      "/api/v1/sites/:siteId/chrome",
      async ({ principal, params, body }) => {
        const site = await getOwnSite(deps, principal, params.siteId);
        return setChromeSettings(deps, site, body);
      },
      {
        operation: "setDefaultChromeLocale",
        scope: "content:write",
        body: ChromeSettingsUpdate,
        response: { 200: ChromeView, ...errors(400, 404) },
        detail: { summary: "Set a site's default chrome locale", tags: ["chrome"] },
      },
    );
}
