import { type Static, Type } from "@sinclair/typebox";
import { sites } from "@site/db";
import { type Context, type ListQuery, siteOfRecord } from "@site/domain/core";
import { sql } from "drizzle-orm";
import { PublicChrome } from "./chrome_model.ts";
import { requireLocale, resolveChromeStrings } from "./chrome_strings.ts";
import { listItems } from "./collection_items.ts";
import type { CollectionItem } from "./collection_model.ts";
import { getLayout } from "./layout.ts";
import { Layout, Styles } from "./layout_model.ts";
import { negotiateLocale } from "./locales.ts";
import { publishedSite } from "./published_site.ts";

/** The public read of a published site: its name, layout, styles and chrome in the visitor's locale. */
export const PublicSite = Type.Object({
  site: Type.Object({ name: Type.String(), slug: Type.String() }),
  layout: Layout,
  styles: Styles,
  chrome: PublicChrome,
});
/** The public read of a published site. */
export type PublicSite = Static<typeof PublicSite>;

/** The site's default locale and every locale it has chrome strings in. */
const localeColumns = {
  defaultLocale: sites.defaultLocale,
  // Qualified by hand: inside a subquery Drizzle writes column names without their table.
  locales: sql<
    string[]
  >`array(select distinct cs.locale from site_chrome_strings cs where cs.site_id = "sites"."id")`,
};

/**
 * A published site for visitors: layout with links translated to current paths and the logo signed with
 * a visitor grant, styles, and the chrome strings of the locale asked for (`locale`, else the
 * Accept-Language header) among those the site has, exact tag before language, else its default.
 */
export async function readPublicSite(
  ctx: Context,
  slug: string,
  opts: { locale?: string; acceptLanguage?: string | null } = {},
): Promise<PublicSite> {
  const site = await publishedSite(ctx, slug, localeColumns);
  const available = [...new Set([site.defaultLocale, ...site.locales])];
  const wanted = opts.locale ? requireLocale(opts.locale) : opts.acceptLanguage;
  const locale = negotiateLocale(wanted, available, site.defaultLocale);
  const [{ state }, strings] = await Promise.all([
    getLayout(ctx, siteOfRecord(site), "visitor"),
    resolveChromeStrings(ctx, site.id, locale, site.defaultLocale),
  ]);
  return {
    site: { name: site.name, slug: site.slug },
    layout: state.layout,
    styles: state.styles,
    chrome: { locale, strings },
  };
}

/** A collection's items for visitors of a published site: images signed with visitor grants. */
export async function readPublicItems(
  ctx: Context,
  slug: string,
  key: string,
  query: ListQuery,
): Promise<{ items: CollectionItem[]; nextCursor: string | null }> {
  const site = await publishedSite(ctx, slug);
  return listItems(ctx, siteOfRecord(site), key, query, "visitor");
}
