import { and, asc, eq } from "drizzle-orm";
import { pages, sites } from "@site/db";
import type { Context } from "./context.ts";
import { notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { grantVisitorUrl } from "./media_grants.ts";
import { legacyStoragePrefixes, parseMediaRef } from "./media_refs.ts";

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * Signs every stored media reference of MDX for visitors of a published site: each `/api/media/<key>`
 * path (bare, under PUBLIC_BASE_URL, or a legacy absolute storage URL) becomes an absolute URL with a
 * visitor grant of `siteId`; the stored content itself stays unsigned.
 */
export function signMediaForVisitors(ctx: Context, siteId: string, content: string): string {
  const bases = [
    `(?:${escapeRegex(ctx.config.publicBaseUrl)})?/api/media/`,
    ...legacyStoragePrefixes(ctx.config).map(escapeRegex),
  ];
  const re = new RegExp(`(?:${bases.join("|")})[^\\s"'\`)<>{}\\]]+`, "g");
  return content.replace(re, (ref) => {
    const parsed = parseMediaRef(ctx.config, ref);
    if (parsed.kind === "outside") return ref;
    return `${ctx.config.publicBaseUrl}${grantVisitorUrl(ctx, siteId, parsed.key)}`;
  });
}

async function publishedSite(ctx: Context, slug: string) {
  const [site] = await ctx.db
    .select({ id: sites.id, name: sites.name, slug: sites.slug, live: sites.publicContentLive })
    .from(sites)
    .where(eq(sites.slug, slug))
    .limit(1);
  // An unpublished site is not there for visitors.
  if (!site?.live) throw notFound("site");
  return site;
}

const publicPage = {
  id: pages.id,
  path: pages.path,
  title: pages.title,
  content: pages.content,
  position: pages.position,
};

/** The pages of a published site for visitors, media signed with visitor grants; 404 while unpublished. */
export async function readPublicPages(ctx: Context, slug: string) {
  const site = await publishedSite(ctx, slug);
  const rows = await ctx.db
    .select(publicPage)
    .from(pages)
    .where(eq(pages.siteId, site.id))
    .orderBy(asc(pages.position), asc(pages.path));
  return {
    site: { name: site.name, slug: site.slug },
    pages: rows.map((p) => ({ ...p, content: signMediaForVisitors(ctx, site.id, p.content) })),
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
  return { page: { ...page, content: signMediaForVisitors(ctx, site.id, page.content) } };
}
