import { mediaFiles, mediaUploads, memberships, newsletterCampaigns, sites, socialMedia } from "@site/db";
import { AppError, type Context, notFound, sessionUser } from "@site/domain/core";
import { and, eq, isNull, sql } from "drizzle-orm";
import { readCampaignMediaToken, readGrant, readShareToken } from "./grants.ts";
import type { MediaContext } from "./library.ts";
import { isPublicIdentityKey, orgOfSocialKey, parseMediaRef, siteOfKey } from "./refs.ts";
import { finalizeUpload } from "./upload.ts";

/** The credentials a delivery request may carry. */
export type DeliveryCredentials = { k?: string | null; t?: string | null; session?: string | null };

/** What the delivery route may serve, how long caches may keep it, and the library's record of it. */
export type DeliveryDecision = { key: string; cacheControl: string; file: LibraryFileInfo | null };

const CACHE = {
  identity: "public, max-age=86400",
  // Short, because unpublishing revokes visitor access at once.
  visitor: "public, max-age=60",
  share: "public, max-age=3600",
  member: "private, max-age=60",
  session: "private, no-cache",
} as const;

const forbidden = (why: string) => new AppError("FORBIDDEN", why);

/** What the library row says about a file: enough to answer without asking the store first. */
export type LibraryFileInfo = { size: number; contentType: string; etag: string | null; lastModified: Date };

async function libraryFile(ctx: MediaContext, key: string): Promise<LibraryFileInfo | null> {
  const find = async () => {
    const [row] = await ctx.db
      .select({
        size: mediaFiles.size,
        contentType: mediaFiles.contentType,
        etag: mediaFiles.etag,
        lastModified: mediaFiles.createdAt,
      })
      .from(mediaFiles)
      // A deleted site's files are not served (decision 0730).
      .innerJoin(sites, and(eq(sites.id, mediaFiles.siteId), isNull(sites.deletedAt)))
      .where(eq(mediaFiles.key, key))
      .limit(1);
    return row ?? null;
  };
  const found = await find();
  if (found) return found;
  // Bytes sent straight to object storage become a file once settled (type check included).
  const [upload] = await ctx.db
    .select()
    .from(mediaUploads)
    .where(and(eq(mediaUploads.key, key), eq(mediaUploads.status, "prepared")))
    .limit(1);
  if (!upload) return null;
  await finalizeUpload(ctx, upload);
  return find();
}

/** The storage key a delivery path names: the path itself, or a legacy absolute storage URL under it. */
export function deliveryKey(ctx: Context, rawPath: string): string | null {
  // A legacy absolute URL arrives with its "//" collapsed by some clients: restore it.
  const legacy = /^(https?):\/\/?(.*)$/s.exec(rawPath);
  const ref = legacy
    ? parseMediaRef(ctx.config, `${legacy[1]}://${legacy[2]}`)
    : parseMediaRef(ctx.config, `/api/media/${rawPath}`);
  return ref.kind === "outside" ? null : ref.key;
}

/**
 * Decides whether a delivery request may read `rawPath` (the part after /api/media/): identity assets
 * are public; library files need a valid grant `k` (visitor: the grant's site must be published now;
 * member), a share token `t`, or a session of a member of the site's organization. 403 FORBIDDEN for a
 * bad or expired credential, 404 NOT_FOUND for no such file.
 */
export async function authorizeMediaRead(
  ctx: MediaContext,
  rawPath: string,
  cred: DeliveryCredentials,
): Promise<DeliveryDecision> {
  const key = deliveryKey(ctx, rawPath);
  if (!key) throw notFound("media file");
  if (isPublicIdentityKey(key)) return { key, cacheControl: CACHE.identity, file: null };
  const keyOrg = orgOfSocialKey(key);
  if (keyOrg) return authorizeSocialRead(ctx, key, keyOrg, cred);
  const keySite = siteOfKey(key);
  if (!keySite) throw notFound("media file");
  let cacheControl: string;
  let file: LibraryFileInfo | null | undefined;
  if (cred.k) {
    const grant = readGrant(ctx, key, cred.k);
    if (!grant) throw forbidden("invalid or expired grant");
    // One round trip: the grant's site liveness and the library's record of the file (of a site not
    // deleted: a deleted site's files are not served, decision 0730).
    const [row] = await ctx.db
      .select({
        live: sites.publicContentLive,
        deleted: sites.deletedAt,
        size: mediaFiles.size,
        contentType: mediaFiles.contentType,
        etag: mediaFiles.etag,
        lastModified: mediaFiles.createdAt,
      })
      .from(sites)
      .leftJoin(
        mediaFiles,
        and(
          eq(mediaFiles.key, key),
          sql`exists (select 1 from sites o where o.id = ${mediaFiles.siteId} and o.deleted_at is null)`,
        ),
      )
      .where(eq(sites.id, grant.siteId))
      .limit(1);
    if (!row) throw forbidden("the grant's site no longer exists");
    if (row.deleted) throw notFound("media file");
    if (grant.kind === "visitor" && !row.live) throw forbidden("the site is not published");
    cacheControl = grant.kind === "visitor" ? CACHE.visitor : CACHE.member;
    if (row.size !== null && row.contentType !== null && row.lastModified !== null)
      file = { size: row.size, contentType: row.contentType, etag: row.etag, lastModified: row.lastModified };
  } else if (cred.t?.startsWith("n.")) {
    // A campaign mail's image: valid while the campaign exists with that media generation (1115).
    const token = readCampaignMediaToken(ctx, key, cred.t);
    if (!token) throw forbidden("invalid or expired share token");
    const [c] = await ctx.db
      .select({ generation: newsletterCampaigns.mediaGeneration })
      .from(newsletterCampaigns)
      .where(eq(newsletterCampaigns.id, token.campaignId))
      .limit(1);
    if (c?.generation !== token.generation) throw forbidden("this campaign's image links were revoked");
    cacheControl = CACHE.share;
  } else if (cred.t) {
    if (!readShareToken(ctx, key, cred.t)) throw forbidden("invalid or expired share token");
    cacheControl = CACHE.share;
  } else if (cred.session) {
    const userId = await sessionUser(ctx, cred.session);
    if (!userId) throw forbidden("no valid session");
    const [member] = await ctx.db
      .select({ role: memberships.role })
      .from(sites)
      .innerJoin(memberships, and(eq(memberships.orgId, sites.orgId), eq(memberships.userId, userId)))
      .where(eq(sites.id, keySite))
      .limit(1);
    if (!member) throw forbidden("not a member of this site's organization");
    cacheControl = CACHE.session;
  } else {
    throw forbidden("a grant (k), share token (t) or session is required");
  }
  // What the library does not list is never served (rejected or unfinished uploads included).
  file ??= await libraryFile(ctx, key);
  if (!file) throw notFound("media file");
  return { key, cacheControl, file };
}

/**
 * A file of an organization's social library (`social-media/<org_id>/…`): an org member grant `k` of
 * that organization, a share token `t` minted for it (platforms at publish), or a session of one of
 * its members. Only files that landed and passed the type check (`ready`) are served.
 */
async function authorizeSocialRead(
  ctx: MediaContext,
  key: string,
  orgId: string,
  cred: DeliveryCredentials,
): Promise<DeliveryDecision> {
  let cacheControl: string;
  if (cred.k) {
    const grant = readGrant(ctx, key, cred.k);
    if (grant?.kind !== "org" || grant.siteId !== orgId) throw forbidden("invalid or expired grant");
    cacheControl = CACHE.member;
  } else if (cred.t) {
    if (readShareToken(ctx, key, cred.t)?.siteId !== orgId) throw forbidden("invalid or expired share token");
    cacheControl = CACHE.share;
  } else if (cred.session) {
    const userId = await sessionUser(ctx, cred.session);
    if (!userId) throw forbidden("no valid session");
    const [member] = await ctx.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)))
      .limit(1);
    if (!member) throw forbidden("not a member of this organization");
    cacheControl = CACHE.session;
  } else {
    throw forbidden("a grant (k), share token (t) or session is required");
  }
  const [row] = await ctx.db
    .select({
      size: socialMedia.size,
      contentType: socialMedia.contentType,
      lastModified: socialMedia.createdAt,
    })
    .from(socialMedia)
    .where(and(eq(socialMedia.key, key), eq(socialMedia.orgId, orgId), eq(socialMedia.status, "ready")))
    .limit(1);
  if (!row) throw notFound("media file");
  return { key, cacheControl, file: { ...row, etag: null } };
}
