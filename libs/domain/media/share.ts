import { sites } from "@site/db";
import { AppError, type Context, isUuid, notFound } from "@site/domain/core";
import { and, eq, isNull } from "drizzle-orm";
import { mediaPath, mintShareToken, SHARE_TOKEN_SECONDS } from "./grants.ts";
import { filesOfSite } from "./site_files.ts";

/**
 * A share-token (`t`) delivery URL for one file of a site (filesOfSite: its library, and for a clone the
 * host files its copied content carried), for
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
    .select({ id: sites.id })
    .from(sites)
    .where(and(eq(sites.id, input.siteId), isNull(sites.deletedAt)))
    .limit(1);
  if (!site) throw notFound("site");
  if (!(await filesOfSite(ctx, input.siteId, [key])).has(key)) throw notFound("media file of this site");
  const t = mintShareToken(ctx, { siteId: input.siteId, key, ttlSeconds: ttl });
  return { url: `${ctx.config.publicBaseUrl}${mediaPath(key)}?t=${t}` };
}
