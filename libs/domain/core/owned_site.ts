declare const owned: unique symbol;

/**
 * A site an organization may act on. The ownership check makes it (`getOwnSite`: the caller's
 * organization's live site, else 404), and the domain's site functions take it instead of a bare id,
 * so a route or MCP tool that skips the check does not compile (decision 1541). The brand exists only
 * in the types: at run time it is the row the check read.
 */
export type OwnedSite = { readonly id: string; readonly orgId: string; readonly [owned]: true };

/**
 * Brands a site row read from the database (its `orgId` is the site's): getOwnSite's row once the
 * organization matched, or a site the system acts on for itself, not for a caller (a published site's
 * public read, a campaign event). The API never calls this: scripts/checks/tenancy_test.ts refuses it
 * there, and refuses any other cast to OwnedSite anywhere.
 */
export function siteOfRecord<T extends { id: string; orgId: string }>(row: T): T & OwnedSite {
  return row as T & OwnedSite;
}
