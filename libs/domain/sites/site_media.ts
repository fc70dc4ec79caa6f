import { and, eq, inArray, or } from "drizzle-orm";
import { mediaFiles, sites } from "@site/db";
import type { Context } from "@site/domain/core";
import { grantMemberUrl, grantVisitorUrl, mediaPath, parseMediaRef, siteOfKey } from "@site/domain/media";
import type { Problem } from "./_input.ts";

/** Who reads stored media references: a member of the organization, or a visitor of a published site. */
export type Reader = "member" | "visitor";

/** One media reference of an input, with the field it sits in. */
export type MediaRefInput = { field: string; ref: string };

/**
 * Checks media references written in settings (a logo, an image field): each must be a `/api/media/<key>`
 * path (bare, under PUBLIC_BASE_URL, or a legacy storage URL) of a file of this site's library or of the
 * template host it was cloned from. A grant or share token on the URL (a read answer written back) is
 * dropped. Returns each reference's bare path to store, and a problem per refused one.
 */
export async function storableMediaRefs(
  ctx: Context,
  siteId: string,
  refs: MediaRefInput[],
): Promise<{ stored: Map<string, string>; problems: Problem[] }> {
  const stored = new Map<string, string>();
  const problems: Problem[] = [];
  const wanted = new Map<string, MediaRefInput[]>();
  for (const r of refs) {
    const parsed = parseMediaRef(ctx.config, r.ref.trim());
    if (parsed.kind === "outside") {
      problems.push({
        field: r.field,
        ref: r.ref,
        message: "not a file of this site's library: use an image's url (/api/media/<key>) from GET …/media",
      });
      continue;
    }
    wanted.set(parsed.key, [...(wanted.get(parsed.key) ?? []), r]);
  }
  if (wanted.size === 0) return { stored, problems };
  const [site] = await ctx.db
    .select({ host: sites.clonedFromSiteId })
    .from(sites)
    .where(eq(sites.id, siteId))
    .limit(1);
  const owners = site?.host ? [siteId, site.host] : [siteId];
  const found = await ctx.db
    .select({ key: mediaFiles.key })
    .from(mediaFiles)
    .where(
      and(inArray(mediaFiles.key, [...wanted.keys()]), or(...owners.map((o) => eq(mediaFiles.siteId, o)))),
    );
  const known = new Set(found.map((f) => f.key));
  for (const [key, rs] of wanted) {
    if (known.has(key)) {
      for (const r of rs) stored.set(r.ref, mediaPath(key));
      continue;
    }
    const owner = siteOfKey(key);
    const message =
      owner && !owners.includes(owner)
        ? "another site's file: upload or import it into this site's library"
        : "unknown file: not in this site's media library";
    for (const r of rs) problems.push({ field: r.field, ref: r.ref, message });
  }
  return { stored, problems };
}

/**
 * A signer for stored media paths: member reads get a short-lived member grant (a path, like a library
 * displayUrl), visitor reads of a published site an absolute URL with a visitor grant (like public pages).
 */
export function mediaSigner(ctx: Context, siteId: string, reader: Reader): (stored: string) => string {
  return (stored) => {
    const parsed = parseMediaRef(ctx.config, stored);
    if (parsed.kind === "outside") return stored;
    return reader === "member"
      ? grantMemberUrl(ctx, siteId, parsed.key)
      : `${ctx.config.publicBaseUrl}${grantVisitorUrl(ctx, siteId, parsed.key)}`;
  };
}
