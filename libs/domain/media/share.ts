import { and, eq, or } from "drizzle-orm";
import { mediaFiles, sites } from "@site/db";
import { type Context, AppError, notFound, isUuid } from "@site/domain/core";
import { mediaPath, mintShareToken, SHARE_TOKEN_SECONDS } from "./grants.ts";

/**
 * A share-token (`t`) delivery URL for one library file of a site (or of its template host), for
 * consumers without a session: social platforms at publish, e-mail recipients at send time.
 */
export async function shareMedia(
  ctx: Context,
  input: { siteId: string; key: string; expiresInSeconds?: number },
): Promise<{ url: string }> {
  const ttl = input.expiresInSeconds ?? SHARE_TOKEN_SECONDS.default;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > SHARE_TOKEN_SECONDS.max) {
    throw new AppError("VALIDATION_ERROR", `expires-in: seconds from 1 to ${SHARE_TOKEN_SECONDS.max}`);
  }
  if (!isUuid(input.siteId)) throw notFound("site");
  const key = input.key.replace(/^\/?api\/media\//, "");
  const [site] = await ctx.db
    .select({ host: sites.clonedFromSiteId })
    .from(sites)
    .where(eq(sites.id, input.siteId))
    .limit(1);
  if (!site) throw notFound("site");
  const owners = site.host ? [input.siteId, site.host] : [input.siteId];
  const [file] = await ctx.db
    .select({ key: mediaFiles.key })
    .from(mediaFiles)
    .where(and(eq(mediaFiles.key, key), or(...owners.map((o) => eq(mediaFiles.siteId, o)))))
    .limit(1);
  if (!file) throw notFound("media file of this site");
  const t = mintShareToken(ctx, { siteId: input.siteId, key, ttlSeconds: ttl });
  return { url: `${ctx.config.publicBaseUrl}${mediaPath(key)}?t=${t}` };
}
