import { mediaFiles, newsletterCampaigns, sites, socialMedia, templates } from "@site/db";
import {
  AppError,
  type Context,
  isUuid,
  notFound,
  type Principal,
  requireSiteManager,
} from "@site/domain/core";
import { lockOrg, releaseOrgStorage } from "@site/domain/media";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";

/**
 * Deletes a site of the caller's organization (DELETE /sites/:id; `sites:write` and the manage-sites
 * role): a soft delete (decision 0730). At once the site answers 404 everywhere (its routes, public
 * reads, delivery of its files), leaves the list and the site limit, is unpublished, its campaigns that
 * were still to go out are cancelled, its files' bytes are given back to the organization's quota, and
 * their registrations in the social library go.
 * Its slug stays taken for SITE_DELETE_GRACE_S; then the site is purged. 409 CONFLICT while a gallery
 * template names it (clones carry its files).
 */
export async function deleteSite(ctx: Context, principal: Principal, siteId: string): Promise<void> {
  requireSiteManager(principal);
  if (!isUuid(siteId)) throw notFound("site");
  await ctx.db.transaction(async (tx) => {
    // The organization first (as every quota change), then the site row.
    const org = await lockOrg(tx, principal.orgId);
    const [site] = await tx
      .select({ id: sites.id })
      .from(sites)
      .where(and(eq(sites.id, siteId), eq(sites.orgId, principal.orgId), isNull(sites.deletedAt)))
      .for("update");
    if (!site) throw notFound("site");
    const hosted = await tx
      .select({ slug: templates.slug })
      .from(templates)
      .where(eq(templates.siteId, site.id));
    if (hosted.length > 0)
      throw new AppError(
        "CONFLICT",
        "this site hosts a gallery template whose clones use its files: ask the operator to remove the template first",
        { templates: hosted.map((t) => t.slug) },
      );
    await tx
      .update(sites)
      .set({ deletedAt: sql`now()`, publicContentLive: false, updatedAt: sql`now()` })
      .where(eq(sites.id, site.id));
    await tx
      .update(newsletterCampaigns)
      .set({ status: "cancelled" })
      .where(
        and(
          eq(newsletterCampaigns.siteId, site.id),
          inArray(newsletterCampaigns.status, ["scheduled", "sending", "paused"]),
        ),
      );
    const [bytes] = await tx
      .select({ n: sql<string>`coalesce(sum(${mediaFiles.size}), 0)::text` })
      .from(mediaFiles)
      .where(eq(mediaFiles.siteId, site.id));
    const size = Number(bytes?.n ?? 0);
    if (size > 0) await releaseOrgStorage(tx, org, size);
    // Its files leave the social library too (registrations only: the bytes were the site's).
    await tx
      .delete(socialMedia)
      .where(
        and(
          eq(socialMedia.orgId, principal.orgId),
          eq(socialMedia.source, "site"),
          inArray(
            socialMedia.key,
            tx.select({ key: mediaFiles.key }).from(mediaFiles).where(eq(mediaFiles.siteId, site.id)),
          ),
        ),
      );
  });
}
