import { sites } from "@site/db";
import { type Context, notFound } from "@site/domain/core";
import { eq } from "drizzle-orm";
import type { SelectedFields } from "drizzle-orm/pg-core";

/**
 * A published site by slug (id, organization, name, slug), with the `extra` columns asked for; 404 NOT_FOUND for an
 * unknown or unpublished one (visitors see nothing). Every public read starts here.
 */
export async function publishedSite<T extends SelectedFields>(
  ctx: Context,
  slug: string,
  extra: T = {} as T,
) {
  const [site] = await ctx.db
    .select({
      id: sites.id,
      orgId: sites.orgId,
      name: sites.name,
      slug: sites.slug,
      live: sites.publicContentLive,
      ...extra,
    })
    .from(sites)
    .where(eq(sites.slug, slug))
    .limit(1);
  // An unpublished site is not there for visitors.
  if (!site?.live) throw notFound("site");
  return site;
}
