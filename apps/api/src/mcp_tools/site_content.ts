import { Type } from "@sinclair/typebox";
import {
  BrokenLinkList,
  ChromeSettingsUpdate,
  ChromeView,
  getOwnSite,
  getPage,
  listBrokenLinks,
  PageAnswer,
  setChromeSettings,
} from "@site/domain/sites";
import { Id, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** One page, the default locale, broken links: the same models and domain functions as the REST routes. */
export const SITE_CONTENT_TOOLS: Tool[] = [
  tool({
    name: "get_page",
    title: "Read one page of a site",
    description:
      "One page by its id (from list_pages): path, title, `content` (the MDX as stored, to edit and send back with update_page) and `displayContent` (signed for showing now, never to store). NOT_FOUND for an id that is not a page of this site. Needs content:read.",
    operation: "getPage",
    output: PageAnswer,
    input: Type.Object({ siteId: SiteId, pageId: Id("a page of the site, from list_pages") }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: { page: await getPage(deps, site, args.pageId) } };
    },
  }),
  tool({
    name: "set_default_locale",
    title: "Set a site's default chrome locale",
    description:
      "Sets the locale (BCP 47: en, de, de-CH) the site's shell falls back to, key by key, after a visitor's locale and its language; answers the chrome strings in it. Translate them with set_chrome_strings. Needs content:write.",
    operation: "setDefaultChromeLocale",
    output: ChromeView,
    input: Type.Object({ siteId: SiteId, ...ChromeSettingsUpdate.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const chrome = await setChromeSettings(deps, site, { defaultLocale: args.defaultLocale });
      return {
        value: chrome,
        note: `Default locale is ${chrome.defaultLocale}; set_chrome_strings translates its strings.`,
      };
    },
  }),
  tool({
    name: "list_broken_links",
    title: "List a site's broken links",
    description:
      "Every stored link that names no page now (a deleted page's page:<id>, a path naming no page), with where it is: a page, the layout (navigation or footer) or a collection item's link field. Fix them with update_page, update_site_layout or update_collection_item; translate_links checks hrefs before writing them. Needs content:read.",
    operation: "listBrokenLinks",
    output: BrokenLinkList,
    input: Type.Object({ siteId: SiteId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const out = await listBrokenLinks(deps, site);
      return {
        value: out,
        note:
          out.links.length === 0
            ? "No broken link."
            : `${out.links.length} broken link(s): fix each where it is (update_page, update_site_layout, update_collection_item).`,
      };
    },
  }),
];
