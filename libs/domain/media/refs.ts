import type { Config } from "@site/config";
import { isSafeKey, s3UrlPrefixes } from "@site/storage";

const MEDIA_PREFIX = "/api/media/";

function decodeKey(raw: string): string | null {
  try {
    const key = raw
      .split("/")
      .map((s) => decodeURIComponent(s))
      .join("/");
    return isSafeKey(key) ? key : null;
  } catch {
    return null;
  }
}

/** The legacy absolute storage URL prefixes (the S3 bucket's own URLs) of this deployment. */
export function legacyStoragePrefixes(config: Config): string[] {
  return config.s3 ? s3UrlPrefixes(config.s3) : [];
}

/** What a media reference in stored content points at. */
export type MediaRef =
  | { kind: "path"; key: string; query: string }
  | { kind: "legacy"; key: string }
  | { kind: "outside" };

/** The prefixes a media reference may start with on this deployment (plain data: a worker can hold it). */
export type MediaRefBases = { publicBaseUrl: string; legacyPrefixes: string[] };

/** The media reference prefixes of this deployment. */
export function mediaRefBases(config: Config): MediaRefBases {
  return { publicBaseUrl: config.publicBaseUrl, legacyPrefixes: legacyStoragePrefixes(config) };
}

/**
 * Reads a reference as stored in MDX or settings: the canonical `/api/media/<key>` path (or the same
 * under PUBLIC_BASE_URL), a legacy absolute storage URL mapped to its key, or anything else (outside).
 */
export function parseMediaRef(config: Config, ref: string): MediaRef {
  return readMediaRef(mediaRefBases(config), ref);
}

/** parseMediaRef with the prefixes computed once. */
export function readMediaRef(bases: MediaRefBases, ref: string): MediaRef {
  const [pathPart, query = ""] = ref.split(/\?(.*)/s, 2) as [string, string | undefined];
  let path = pathPart;
  if (path.startsWith(`${bases.publicBaseUrl}${MEDIA_PREFIX}`)) path = path.slice(bases.publicBaseUrl.length);
  if (path.startsWith(MEDIA_PREFIX)) {
    const key = decodeKey(path.slice(MEDIA_PREFIX.length));
    return key ? { kind: "path", key, query } : { kind: "outside" };
  }
  for (const prefix of bases.legacyPrefixes) {
    if (pathPart.startsWith(prefix)) {
      const key = decodeKey(pathPart.slice(prefix.length));
      if (key) return { kind: "legacy", key };
    }
  }
  return { kind: "outside" };
}

/** The site a library key belongs to (`site-media/<site_id>/…`), or null for other keys. */
export function siteOfKey(key: string): string | null {
  const m = /^site-media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/[^/]+$/.exec(key);
  return m ? m[1]! : null;
}

/** The organization a social library key belongs to (`social-media/<org_id>/…`), or null. */
export function orgOfSocialKey(key: string): string | null {
  const m = /^social-media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/[^/]+$/.exec(key);
  return m ? m[1]! : null;
}

/** Keys anyone may read without a credential (identity assets). */
export function isPublicIdentityKey(key: string): boolean {
  return key.startsWith("avatars/") || key.startsWith("organization-logos/");
}
