import type { Context } from "@site/domain/core";
import {
  filesOfSite,
  grantMemberUrl,
  grantVisitorUrl,
  mediaPath,
  parseMediaRef,
  siteOfKey,
} from "@site/domain/media";
import type { Problem } from "./_input.ts";

/** Who reads stored media references: a member of the organization, or a visitor of a published site. */
export type Reader = "member" | "visitor";

/** One media reference of an input, with the field it sits in. */
export type MediaRefInput = { field: string; ref: string };

/**
 * Checks media references written in settings (a logo, an image field): each must be a `/api/media/<key>`
 * path (bare, under PUBLIC_BASE_URL, or a legacy storage URL) of a file of this site (filesOfSite: its
 * library, and for a clone the host files its copied content carried). A grant or share token on the URL (a read answer written back) is
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
  const known = await filesOfSite(ctx, siteId, wanted.keys());
  for (const [key, rs] of wanted) {
    if (known.has(key)) {
      for (const r of rs) stored.set(r.ref, mediaPath(key));
      continue;
    }
    const owner = siteOfKey(key);
    const message =
      owner && owner !== siteId
        ? "another site's file: upload or import it into this site's library"
        : "unknown file: not in this site's media library";
    for (const r of rs) problems.push({ field: r.field, ref: r.ref, message });
  }
  return { stored, problems };
}

/**
 * A signer for stored media paths: member reads get a short-lived member grant (a path, like a library
 * displayUrl), visitor reads of a published site an absolute URL with a visitor grant (like public pages).
 * Only files of the site (filesOfSite, asked once here for every path in `paths`) are signed, whatever
 * was stored (the check at signing does not trust the one at write, decision 0610): any other path — a
 * foreign file, a host file the clone's content never carried, or a path not in `paths` — is returned as
 * stored, with no grant.
 */
export async function mediaSigner(
  ctx: Context,
  siteId: string,
  reader: Reader,
  paths: Iterable<string>,
): Promise<(stored: string) => string> {
  const keyOf = (stored: string) => {
    const parsed = parseMediaRef(ctx.config, stored);
    return parsed.kind === "outside" ? null : parsed.key;
  };
  const keys: string[] = [];
  for (const p of paths) {
    const key = keyOf(p);
    if (key) keys.push(key);
  }
  const owned = await filesOfSite(ctx, siteId, keys);
  return (stored) => {
    const key = keyOf(stored);
    if (!key || !owned.has(key)) return stored;
    return reader === "member"
      ? grantMemberUrl(ctx, siteId, key)
      : `${ctx.config.publicBaseUrl}${grantVisitorUrl(ctx, siteId, key)}`;
  };
}
