import { and, count, eq, sql } from "drizzle-orm";
import { isUniqueViolation, organizations, pages, siteLayouts, sites, type Tx } from "@site/db";
import { type Principal, requireSiteManager } from "./auth.ts";
import type { Context } from "./context.ts";
import { AppError, notFound } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { keysetPage, newestFirst, olderThan } from "./pagination.ts";
import { DEFAULT_LAYOUT, DEFAULT_STYLES, welcomePage } from "./site_defaults.ts";
import { checkSlug } from "./slugs.ts";
import { resolveTemplate } from "./templates.ts";

/** The site as the API answers it. */
export type SiteView = {
  id: string;
  name: string;
  slug: string;
  public_content_live: boolean;
  updated_at: string;
};

/** `updated_at` with microseconds and a UTC offset, formatted by PostgreSQL so no precision is lost. */
export const micros = (col: unknown) =>
  sql<string>`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')`;

const siteView = {
  id: sites.id,
  name: sites.name,
  slug: sites.slug,
  public_content_live: sites.publicContentLive,
  updated_at: micros(sites.updatedAt),
};

/** The input of site creation. */
export type CreateSiteInput = { name?: unknown; slug?: unknown; template?: unknown };

function checkName(name: unknown): string {
  if (typeof name !== "string" || name.trim() === "") {
    throw new AppError("VALIDATION_ERROR", "name: required", [{ field: "name", message: "required" }]);
  }
  if ([...name].length > 100) {
    throw new AppError("VALIDATION_ERROR", "name: at most 100 characters", [
      { field: "name", message: "at most 100 characters" },
    ]);
  }
  return name.trim();
}

function checkSlugInput(slug: unknown): string {
  if (typeof slug !== "string" || slug === "") {
    throw new AppError("VALIDATION_ERROR", "slug: required", [{ field: "slug", message: "required" }]);
  }
  checkSlug(slug);
  return slug;
}

async function reserveSiteSlot(tx: Tx, orgId: string): Promise<void> {
  const [org] = await tx
    .select({ siteLimit: organizations.siteLimit })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .for("update");
  if (!org) throw notFound("organization");
  const [{ n }] = (await tx.select({ n: count() }).from(sites).where(eq(sites.orgId, orgId))) as [
    { n: number },
  ];
  if (n >= org.siteLimit) {
    throw new AppError("LIMIT_EXCEEDED", `this organization has reached its limit of ${org.siteLimit} sites`);
  }
}

async function copyTemplate(tx: Tx, hostSiteId: string, siteId: string): Promise<void> {
  await tx.execute(sql`
    insert into pages (site_id, path, title, content, position)
    select ${siteId}::uuid, path, title, content, position from pages where site_id = ${hostSiteId}::uuid`);
  await tx.execute(sql`
    insert into site_layouts (site_id, layout, styles)
    select ${siteId}::uuid, layout, styles from site_layouts where site_id = ${hostSiteId}::uuid`);
  const [layout] = await tx
    .select({ id: siteLayouts.siteId })
    .from(siteLayouts)
    .where(eq(siteLayouts.siteId, siteId));
  if (!layout)
    await tx.insert(siteLayouts).values({ siteId, layout: DEFAULT_LAYOUT, styles: DEFAULT_STYLES });
}

/** Creates a site in the caller's organization, optionally cloned from a gallery template (spec: POST /sites). */
export async function createSite(
  ctx: Context,
  principal: Principal,
  input: CreateSiteInput,
): Promise<SiteView> {
  requireSiteManager(principal);
  const name = checkName(input.name);
  const slug = checkSlugInput(input.slug);
  if (input.template !== undefined && input.template !== null && typeof input.template !== "string") {
    throw new AppError("VALIDATION_ERROR", "template: must be a string", [
      { field: "template", message: "must be a string" },
    ]);
  }
  // Rule 1: template resolution runs before any database write.
  const template = input.template ? await resolveTemplate(ctx, input.template) : null;
  const [taken] = await ctx.db.select({ id: sites.id }).from(sites).where(eq(sites.slug, slug)).limit(1);
  if (taken) throw new AppError("SLUG_TAKEN", `slug "${slug}" is already used`);

  let stage = "insert";
  try {
    return await ctx.db.transaction(async (tx) => {
      await reserveSiteSlot(tx, principal.orgId);
      const [site] = await tx
        .insert(sites)
        .values({
          orgId: principal.orgId,
          name,
          slug,
          templateSlug: template?.slug ?? null,
          clonedFromSiteId: template?.siteId ?? null,
        })
        .returning(siteView);
      stage = "clone";
      if (template) {
        await copyTemplate(tx, template.siteId, site!.id);
      } else {
        await tx.insert(pages).values({ siteId: site!.id, ...welcomePage(name) });
        await tx
          .insert(siteLayouts)
          .values({ siteId: site!.id, layout: DEFAULT_LAYOUT, styles: DEFAULT_STYLES });
      }
      return site!;
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (isUniqueViolation(err, "sites_slug_unique"))
      throw new AppError("SLUG_TAKEN", `slug "${slug}" is already used`);
    if (stage === "clone") {
      ctx.log.error("template clone failed", { template: template?.slug, cause: String(err) });
      throw new AppError("TEMPLATE_CLONE_FAILED", "copying the template failed; no site was created");
    }
    throw err;
  }
}

/** Lists the organization's sites, newest first, with an opaque keyset cursor. */
export async function listSites(
  ctx: Context,
  principal: Principal,
  opts: { cursor?: string; limit: number },
) {
  const rows = await ctx.db
    .select({ ...siteView, at: sql<string>`${sites.createdAt}::text` })
    .from(sites)
    .where(and(eq(sites.orgId, principal.orgId), olderThan(sites.createdAt, sites.id, opts.cursor)))
    .orderBy(...newestFirst(sites.createdAt, sites.id))
    .limit(opts.limit + 1);
  const { page, nextCursor } = keysetPage(rows, opts.limit, (r) => ({ at: r.at, id: r.id }));
  return { sites: page.map(({ at: _at, ...s }) => s), nextCursor };
}

/** A site of the caller's organization; 404 NOT_FOUND for any other (as if it did not exist). */
export async function getOwnSite(ctx: Context, principal: Principal, siteId: string) {
  if (!isUuid(siteId)) throw notFound("site");
  const [site] = await ctx.db
    .select({ ...siteView, orgId: sites.orgId, clonedFromSiteId: sites.clonedFromSiteId })
    .from(sites)
    .where(and(eq(sites.id, siteId), eq(sites.orgId, principal.orgId)))
    .limit(1);
  if (!site) throw notFound("site");
  return site;
}

/** Publishes or unpublishes a site; unpublishing revokes visitor access to its media at once. */
export async function setSitePublished(ctx: Context, siteId: string, live: boolean): Promise<SiteView> {
  const [site] = await ctx.db
    .update(sites)
    .set({ publicContentLive: live, comingSoon: live ? false : sites.comingSoon, updatedAt: sql`now()` })
    .where(eq(sites.id, siteId))
    .returning(siteView);
  if (!site) throw notFound("site");
  return site;
}
