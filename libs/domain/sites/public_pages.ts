import { pages } from "@site/db";
import { type Context, isUuid, notFound } from "@site/domain/core";
import { and, asc, eq } from "drizzle-orm";
import { loadPageIndex, type PageIndex, pageIndexOf } from "./links.ts";
import { linkSpansOf, readPageLinks } from "./page_links.ts";
import { signPageMedia } from "./page_signing.ts";
import { publishedSite } from "./published_site.ts";

const publicPage = {
  id: pages.id,
  path: pages.path,
  title: pages.title,
  content: pages.content,
  position: pages.position,
  links: pages.links,
};

type PublicRow = {
  id: string;
  path: string;
  title: string;
  content: string;
  position: number;
  links: unknown;
};

/**
 * A page for visitors: links to pages translated to their current paths (first: the stored spans index
 * the stored text), then media of the site (filesOfSite) signed with visitor grants, nothing else.
 */
async function forVisitors(
  ctx: Context,
  site: Awaited<ReturnType<typeof publishedSite>>,
  row: PublicRow,
  index: PageIndex,
) {
  const { links, ...page } = row;
  const { content } = await signPageMedia(ctx, {
    siteId: site.id,
    pageId: page.id,
    content: readPageLinks(row.content, linkSpansOf(links, row.content), index),
    grant: "visitor",
  });
  return { ...page, content };
}

/** The pages of a published site for visitors, media signed with visitor grants; 404 while unpublished. */
export async function readPublicPages(ctx: Context, slug: string) {
  const site = await publishedSite(ctx, slug);
  const rows = await ctx.db
    .select(publicPage)
    .from(pages)
    .where(eq(pages.siteId, site.id))
    .orderBy(asc(pages.position), asc(pages.path));
  const index = pageIndexOf(rows);
  return {
    site: { name: site.name, slug: site.slug },
    pages: await Promise.all(rows.map((p) => forVisitors(ctx, site, p, index))),
  };
}

/** One page of a published site for visitors, media signed with visitor grants; 404 otherwise. */
export async function readPublicPage(ctx: Context, slug: string, pageId: string) {
  const site = await publishedSite(ctx, slug);
  if (!isUuid(pageId)) throw notFound("page");
  const [page] = await ctx.db
    .select(publicPage)
    .from(pages)
    .where(and(eq(pages.siteId, site.id), eq(pages.id, pageId)))
    .limit(1);
  if (!page) throw notFound("page");
  return { page: await forVisitors(ctx, site, page, await loadPageIndex(ctx.db, site.id)) };
}
