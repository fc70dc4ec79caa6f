import { cloneSourceFiles, mediaFiles, mediaUploads, newsletterCampaigns, socialMedia } from "@site/db";
import { AppError, isUuid, notFound, type Principal } from "@site/domain/core";
import { lockSiteOrg, type MediaContext, mediaRefBases, releaseOrgStorage } from "@site/domain/media";
import { and, count, eq, ne, sql } from "drizzle-orm";
import { contentMediaRefs } from "./content_media.ts";
import { getOwnSite } from "./sites.ts";

/** Something that still uses a library file; a 409's `details.references` lists each. */
export type MediaReference =
  | { kind: "page"; id: string; path: string }
  | { kind: "layout" }
  | { kind: "collectionItem"; id: string; collectionId: string }
  | { kind: "campaign"; id: string; subject: string; status: string }
  | { kind: "socialMedia"; id: string }
  | { kind: "clones"; count: number };

/** How many references a refusal names (the total is in `details.total`). */
const MAX_NAMED = 50;

/**
 * Deletes a file of a site's media library (DELETE /sites/:id/media/:mediaId, decision 0731): the row
 * goes (the file leaves the list and its delivery answers 404), its bytes go back to the organization's
 * quota and its stored object is removed. Refused with 409 CONFLICT, `details.references` naming each,
 * while anything uses it: a page, the layout, a collection item (found by the same scan that records what
 * clones carry), a campaign not cancelled (mail already sent shows the image from here), an entry of the
 * social library, or template clones whose copied content carries it. 404 for a file not of this site.
 */
export async function deleteSiteMedia(
  ctx: MediaContext,
  principal: Principal,
  siteId: string,
  mediaId: string,
): Promise<void> {
  const site = await getOwnSite(ctx, principal, siteId);
  if (!isUuid(mediaId)) throw notFound("media file");
  await ctx.db.transaction(async (tx) => {
    const org = await lockSiteOrg(tx, site.id);
    const [file] = await tx
      .select({ id: mediaFiles.id, key: mediaFiles.key, size: mediaFiles.size })
      .from(mediaFiles)
      .where(and(eq(mediaFiles.id, mediaId), eq(mediaFiles.siteId, site.id)))
      .for("update");
    if (!file) throw notFound("media file");

    const refs: MediaReference[] = [];
    for (const r of await contentMediaRefs(tx, mediaRefBases(ctx.config), site.id)) {
      if (r.key !== file.key) continue;
      if (r.kind === "page") refs.push({ kind: "page", id: r.id, path: r.path });
      else if (r.kind === "layout") refs.push({ kind: "layout" });
      else refs.push({ kind: "collectionItem", id: r.id, collectionId: r.collectionId });
    }
    // Stored campaign HTML holds bare /api/media/<key> paths (storableCampaignHtml).
    const campaigns = await tx
      .select({
        id: newsletterCampaigns.id,
        subject: newsletterCampaigns.subject,
        status: newsletterCampaigns.status,
      })
      .from(newsletterCampaigns)
      .where(
        and(
          eq(newsletterCampaigns.siteId, site.id),
          ne(newsletterCampaigns.status, "cancelled"),
          sql`strpos(${newsletterCampaigns.html}, ${file.key}) > 0`,
        ),
      );
    for (const c of campaigns) refs.push({ kind: "campaign", ...c });
    const social = await tx
      .select({ id: socialMedia.id })
      .from(socialMedia)
      .where(and(eq(socialMedia.orgId, org.orgId), eq(socialMedia.key, file.key)));
    for (const s of social) refs.push({ kind: "socialMedia", id: s.id });
    const [clones] = await tx
      .select({ n: count() })
      .from(cloneSourceFiles)
      .where(eq(cloneSourceFiles.key, file.key));
    if (clones && clones.n > 0) refs.push({ kind: "clones", count: clones.n });

    if (refs.length > 0) {
      const named = refs.slice(0, MAX_NAMED);
      const what = [...new Set(named.map((r) => r.kind))].join(", ");
      throw new AppError("CONFLICT", `the file is still in use (${what}): remove those references first`, {
        references: named,
        total: refs.length,
      });
    }

    await tx.delete(mediaFiles).where(eq(mediaFiles.id, file.id));
    await tx.delete(mediaUploads).where(eq(mediaUploads.key, file.key));
    await releaseOrgStorage(tx, org, file.size);
    // Before the commit (as for the social library, decision 1300): a store that is down fails the
    // call with nothing changed; a commit failing afterwards leaves a row whose retry deletes it.
    await ctx.store.delete(file.key);
  });
}
