import {
  isDatabaseUnavailable,
  isUniqueViolation,
  organizations,
  pages,
  siteLayouts,
  sites,
  type Tx,
} from "@site/db";
import {
  AppError,
  andOlderThan,
  type Context,
  type InWork,
  isUuid,
  keysetPage,
  type ListQuery,
  notFound,
  type OwnedSite,
  PAGE_LIMIT,
  type Principal,
  requireSiteManager,
  siteOfRecord,
} from "@site/domain/core";
import { mediaRefBases } from "@site/domain/media";
import { recordEvent } from "@site/domain/webhooks";
import { and, count, eq, isNull, lte, sql } from "drizzle-orm";
import { DEFAULT_STYLES, welcomePage } from "./defaults.ts";
import { defaultStoredLayout } from "./layout.ts";
import { pageIndexOf } from "./links.ts";
import type { CreateSiteBody, SiteView } from "./models.ts";
import { checkSlug } from "./slugs.ts";
import { copyTemplate } from "./template_copy.ts";
import { resolveTemplate } from "./templates.ts";

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

// The shape is CreateSiteBody's; these are the rules a schema does not say (trimmed, code points).
function checkName(name: string): string {
  if (name.trim() === "") {
    throw new AppError("VALIDATION_ERROR", "name: required", [{ field: "name", message: "required" }]);
  }
  if ([...name].length > 100) {
    throw new AppError("VALIDATION_ERROR", "name: at most 100 characters", [
      { field: "name", message: "at most 100 characters" },
    ]);
  }
  return name.trim();
}

function checkSlugInput(slug: string): string {
  if (slug === "") {
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
  // A deleted site no longer counts against the limit (decision 0730).
  const [{ n }] = (await tx
    .select({ n: count() })
    .from(sites)
    .where(and(eq(sites.orgId, orgId), isNull(sites.deletedAt)))) as [{ n: number }];
  if (n >= org.siteLimit) {
    throw new AppError("LIMIT_EXCEEDED", `this organization has reached its limit of ${org.siteLimit} sites`);
  }
}

/** Creates a site in the caller's organization, optionally cloned from a gallery template (spec: POST /sites). */
export async function createSite(
  ctx: Context,
  principal: Principal,
  input: CreateSiteBody,
  inWork?: InWork<SiteView>,
): Promise<SiteView> {
  requireSiteManager(principal);
  const name = checkName(input.name);
  const slug = checkSlugInput(input.slug);
  // Rule 1: template resolution runs before any database write.
  const template = input.template ? await resolveTemplate(ctx, input.template) : null;
  await purgeSlugHolder(ctx, slug);
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
        // A large template may copy for minutes (decision 0005): lift the statement bound for this one.
        await tx.execute(sql`set local statement_timeout = '300s'`);
        await copyTemplate(tx, template.siteId, site!.id, mediaRefBases(ctx.config));
      } else {
        const welcome = await tx
          .insert(pages)
          .values({ siteId: site!.id, ...welcomePage(name) })
          .returning({ id: pages.id, path: pages.path });
        await tx.insert(siteLayouts).values({
          siteId: site!.id,
          layout: defaultStoredLayout(pageIndexOf(welcome)),
          styles: DEFAULT_STYLES,
        });
      }
      // The request's answer commits with the site (decision 1411).
      stage = "answer";
      await inWork?.(tx, site!);
      return site!;
    });
  } catch (err) {
    if (err instanceof AppError || isDatabaseUnavailable(err)) throw err;
    if (isUniqueViolation(err, "sites_slug_unique"))
      throw new AppError("SLUG_TAKEN", `slug "${slug}" is already used`);
    if (stage === "clone") {
      ctx.log.error("template clone failed", { template: template?.slug, cause: err });
      throw new AppError("TEMPLATE_CLONE_FAILED", "copying the template failed; no site was created");
    }
    throw err;
  }
}

/** `2026-11-22 18:30:00.1234` (UTC, as PostgreSQL prints a timestamp) → `2026-11-22T18:30:00.123400+00:00`. */
function isoMicros(utc: string): string {
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(utc);
  if (!m) return utc;
  return `${m[1]}T${m[2]}.${((m[3] ?? "") + "000000").slice(0, 6)}+00:00`;
}

/** Lists the organization's sites, newest first, with an opaque keyset cursor. */
export async function listSites(ctx: Context, principal: Principal, query: ListQuery) {
  const limit = query.limit ?? PAGE_LIMIT.default;
  // Written in SQL, timestamps formatted here: a hot keyed read, where the query builder and to_char
  // cost more than the query. The page comes back as one JSON array: one column to decode instead of
  // six per row (decision 0810).
  type Tuple = [id: string, name: string, slug: string, live: boolean, updated: string, at: string];
  const [read] = await ctx.db.execute<{ page: Tuple[] }>(sql`
    select coalesce(json_agg(json_build_array(p.id, p.name, p.slug, p.public_content_live, p.updated, p.at)
      order by p.created_at desc, p.id desc), '[]'::json) as page
    from (select s.id, s.name, s.slug, s.public_content_live, s.created_at,
        (s.updated_at at time zone 'UTC')::text as updated, s.created_at::text as at
      from sites s
      where s.org_id = ${principal.orgId}::uuid and s.deleted_at is null${andOlderThan(sql`s.created_at`, sql`s.id`, query.cursor)}
      order by s.created_at desc, s.id desc limit ${limit + 1}) p`);
  const rows = read!.page.map(([id, name, slug, public_content_live, updated, at]) => ({
    id,
    name,
    slug,
    public_content_live,
    updated,
    at,
  }));
  const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.at, id: r.id }));
  return {
    sites: page.map(({ at: _at, updated, ...s }): SiteView => ({ ...s, updated_at: isoMicros(updated) })),
    nextCursor,
  };
}

/** A site of the caller's organization; 404 NOT_FOUND for any other (as if it did not exist). */
export async function getOwnSite(ctx: Context, principal: Principal, siteId: string) {
  if (!isUuid(siteId)) throw notFound("site");
  const [site] = await ctx.db
    .select({ ...siteView, orgId: sites.orgId, clonedFromSiteId: sites.clonedFromSiteId })
    .from(sites)
    .where(and(eq(sites.id, siteId), eq(sites.orgId, principal.orgId), isNull(sites.deletedAt)))
    .limit(1);
  if (!site) throw notFound("site");
  return siteOfRecord(site);
}

/**
 * Any organization's live site by id, for the system acting for itself (the operator CLI, a test);
 * 404 NOT_FOUND for an unknown or deleted one. The API's routes and tools use getOwnSite.
 */
export async function siteById(ctx: Context, siteId: string): Promise<OwnedSite> {
  const [site] = await ctx.db
    .select({ id: sites.id, orgId: sites.orgId })
    .from(sites)
    .where(and(eq(sites.id, siteId), isNull(sites.deletedAt)))
    .limit(1);
  if (!site) throw notFound("site");
  return siteOfRecord(site);
}

/** Publishes or unpublishes a site; unpublishing revokes visitor access to its media at once. */
export async function setSitePublished(ctx: Context, site: OwnedSite, live: boolean): Promise<SiteView> {
  const siteId = site.id;
  return ctx.db.transaction(async (tx) => {
    const [before] = await tx
      .select({ live: sites.publicContentLive, orgId: sites.orgId })
      .from(sites)
      .where(and(eq(sites.id, siteId), isNull(sites.deletedAt)))
      .for("update");
    if (!before) throw notFound("site");
    const [site] = await tx
      .update(sites)
      .set({ publicContentLive: live, comingSoon: live ? false : sites.comingSoon, updatedAt: sql`now()` })
      .where(and(eq(sites.id, siteId), isNull(sites.deletedAt)))
      .returning(siteView);
    if (!site) throw notFound("site");
    // site.published when it goes live (not for a repeated publish), committed with the change (0840).
    if (live && !before.live)
      await recordEvent(tx, { orgId: before.orgId, type: "site.published", data: site });
    return site;
  });
}

/** Sets a site's name (PATCH /sites/:id); the same rules as at creation. */
export async function renameSite(
  ctx: Context,
  principal: Principal,
  siteId: string,
  input: { name?: string },
): Promise<SiteView> {
  requireSiteManager(principal);
  const own = await getOwnSite(ctx, principal, siteId);
  if (input.name === undefined) {
    const { orgId: _o, clonedFromSiteId: _c, ...view } = own;
    return view;
  }
  const name = checkName(input.name);
  const [site] = await ctx.db
    .update(sites)
    .set({ name, updatedAt: sql`now()` })
    .where(and(eq(sites.id, own.id), isNull(sites.deletedAt)))
    .returning(siteView);
  if (!site) throw notFound("site");
  return site;
}

/**
 * Purges the site holding `slug` if it was deleted longer than SITE_DELETE_GRACE_S ago (its rows go by
 * cascade; its stored files become orphans the media sweeper removes), so that the slug is free again
 * exactly when the grace ends, whenever the sweeper last ran (decision 0730).
 */
async function purgeSlugHolder(ctx: Context, slug: string): Promise<void> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.limits.siteDeleteGraceS * 1000);
  await ctx.db.delete(sites).where(and(eq(sites.slug, slug), lte(sites.deletedAt, cutoff)));
}

/** The longest site name, in characters. */
export const SITE_NAME_MAX_LENGTH = 100;
