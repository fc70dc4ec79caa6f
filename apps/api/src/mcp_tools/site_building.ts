import { Type } from "@sinclair/typebox";
import { ListQuery } from "@site/domain/core";
import {
  ChromeStringsUpdate,
  ChromeView,
  CollectionAnswer,
  CollectionDefinition,
  CollectionItemList,
  defineCollection,
  getChrome,
  getLayout,
  getOwnSite,
  ItemPage,
  ItemValues,
  LayoutAnswer,
  LayoutUpdate,
  listItems,
  listPages,
  PageList,
  PageOrderBody,
  reorderPages,
  setChromeStrings,
  TranslatedLinks,
  TranslateLinksBody,
  translateLinks,
  updateLayout,
  upsertItems,
} from "@site/domain/sites";
import { Cursor, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

// The site-building tools: each takes the same model as its REST route (plus siteId) and calls the same
// domain function, so scopes, validation and every rule are the REST API's.

const siteId = SiteId;
const collection = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,62}$",
  maxLength: 63,
  description: "the collection key (lowercase letters, digits, hyphens)",
});
// Schema-stated limits (issue 13): a BCP 47 tag is at most 35 characters (canonicalLocale).
const locale = (description: string) => Type.String({ minLength: 2, maxLength: 35, description });

/** The tools an agent builds a site with: layout, chrome strings, collections, page order, links. */
export const SITE_BUILDING_TOOLS: Tool[] = [
  tool({
    name: "get_site_layout",
    title: "Read a site's layout and styles",
    description:
      "Returns the site's layout (logo, header navigation, footer) and styles (colours, fonts) with `etag`, the version to pass as ifMatch to update_site_layout. Internal links read as the pages' current paths; the logo as a short-lived signed URL. Needs content:read.",
    operation: "getSiteLayout",
    output: LayoutAnswer,
    input: Type.Object({ siteId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { state, etag } = await getLayout(deps, site, "member");
      return { value: { ...state, etag } };
    },
  }),
  tool({
    name: "update_site_layout",
    title: "Update a site's layout and styles",
    description:
      "Replaces the layout, the styles, or both. Read them first (get_site_layout) and pass its etag as ifMatch: a stale one fails with PRECONDITION_FAILED and changes nothing. The logo is a library image's `url` (/api/media/<key>, from list_media) or null; navigation holds at most 100 items on two levels (children have no children), labels at most 100 characters of plain text, colours #rrggbb. Link pages by path (/about) or page:<id>: paths are stored as page references, so renames keep links working. Needs content:write.",
    operation: "replaceSiteLayout",
    output: LayoutAnswer,
    input: Type.Object({
      siteId,
      ...LayoutUpdate.properties,
      ifMatch: Type.Optional(Type.String({ maxLength: 200, description: "the etag from get_site_layout" })),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { layout, styles, ifMatch } = args;
      const { state, etag } = await updateLayout(deps, site, { layout, styles }, { ifMatch });
      return { value: { ...state, etag }, note: `Layout updated (etag ${etag}).` };
    },
  }),
  tool({
    name: "set_chrome_strings",
    title: "Set a site's chrome strings in one locale",
    description:
      "Sets the words of the site's shell (navigation, footer, coming-soon and not-found pages, cookie notice, newsletter form) in one locale: keys like nav.home, footer.copyright, cookieNotice.accept, newsletter.submit (read them all with their English defaults via get_chrome_strings). Merged into what is there; null restores the default. Plain text only, at most 2,000 characters; HTML is refused. Needs content:write.",
    operation: "setChromeStrings",
    output: ChromeView,
    input: Type.Object({
      siteId,
      locale: locale("BCP 47 tag: en, de, de-CH"),
      ...ChromeStringsUpdate.properties,
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await setChromeStrings(deps, site, args.locale, { strings: args.strings }) };
    },
  }),
  tool({
    name: "get_chrome_strings",
    title: "Read a site's chrome strings",
    description:
      "Every chrome string key with its text in one locale (default: the site's default locale), falling back key by key to the language, the default locale and the built-in English. Needs content:read.",
    operation: "getChromeStrings",
    output: ChromeView,
    input: Type.Object({ siteId, locale: Type.Optional(locale("BCP 47 tag")) }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await getChrome(deps, site, args.locale) };
    },
  }),
  tool({
    name: "define_collection",
    title: "Create or change a collection",
    description:
      "Defines a collection of structured content (team, products, posts): a name and typed fields (text, richtext, number, boolean, date, image, link; required optional). Changing a definition in a way existing items would break is refused with how many items. Needs content:write.",
    operation: "defineCollection",
    output: CollectionAnswer,
    input: Type.Object({ siteId, key: collection, ...CollectionDefinition.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { key, name, fields } = args;
      return { value: { collection: await defineCollection(deps, site, key, { name, fields }) } };
    },
  }),
  tool({
    name: "upsert_collection_items",
    title: "Add or update collection items",
    description:
      "Writes up to 100 items of a collection at once, all or nothing: an entry without `id` is added at the end, one with `id` has its values merged (null clears an optional field). Image values are library `url`s (/api/media/<key>); link values site paths or page:<id>. Each wrong value is named (items.<n>.values.<field>). Needs content:write.",
    operation: "addCollectionItem",
    output: CollectionItemList,
    input: Type.Object({
      siteId,
      collection,
      items: Type.Array(
        Type.Object({
          id: Type.Optional(Type.String({ description: "an existing item's id; omit to add one" })),
          ...ItemValues.properties,
        }),
        { minItems: 1, maxItems: 100 },
      ),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const items = await upsertItems(deps, site, args.collection, args.items);
      return { value: { items }, note: `Wrote ${items.length} item(s) of ${args.collection}.` };
    },
  }),
  tool({
    name: "list_collection_items",
    title: "List a collection's items",
    description:
      "Lists a collection's items in position order, 1-100 per call, with nextCursor for the next page. Needs content:read.",
    operation: "listCollectionItems",
    output: ItemPage,
    input: Type.Object({
      siteId,
      collection,
      ...ListQuery.properties,
      cursor: Type.Optional(Cursor),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return {
        value: await listItems(deps, site, args.collection, {
          cursor: args.cursor,
          limit: args.limit ?? 50,
        }),
      };
    },
  }),
  tool({
    name: "reorder_pages",
    title: "Reorder a site's pages",
    description:
      "Puts the site's pages in the given order in one write. pageIds must be exactly the site's pages, each once (list them first); otherwise nothing changes and the error names the missing, unknown and repeated ids. Needs content:write.",
    operation: "reorderPages",
    output: PageList,
    input: Type.Object({ siteId, ...PageOrderBody.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await reorderPages(deps, site, { pageIds: args.pageIds });
      // REST's answer: the pages as list_pages reads them, in their new order.
      return { value: { pages: await listPages(deps, site) } };
    },
  }),
  tool({
    name: "translate_links",
    title: "Say what links name in a site",
    description:
      "For up to 1,000 hrefs, says what each names now: a page (id and current path), a media file of the site, an external URL, an anchor, or broken. Use it to check links before writing them. Needs content:read.",
    operation: "translateLinks",
    output: TranslatedLinks,
    input: Type.Object({ siteId, ...TranslateLinksBody.properties }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await translateLinks(deps, site, { hrefs: args.hrefs }) };
    },
  }),
];
