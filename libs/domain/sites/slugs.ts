import { AppError } from "@site/domain/core";

/** Slugs that name the service's own hosts and can never be a site's preview subdomain. */
export const RESERVED_SLUGS = new Set([
  "www",
  "api",
  "app",
  "admin",
  "mail",
  "static",
  "cdn",
  "assets",
  "dashboard",
  "status",
  "docs",
  "help",
  "support",
  "blog",
  "preview",
  "media",
  "auth",
  "login",
  "account",
  "billing",
  "mcp",
  "smtp",
  "ftp",
  "ns1",
  "ns2",
  "localhost",
  "root",
  "system",
]);

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Checks a site slug as a DNS label: 400 INVALID_SLUG or RESERVED_SLUG. */
export function checkSlug(slug: string): void {
  if (!SLUG.test(slug)) {
    throw new AppError(
      "INVALID_SLUG",
      "slug must be 1 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen",
      [{ field: "slug", message: "invalid format" }],
    );
  }
  if (RESERVED_SLUGS.has(slug)) {
    throw new AppError("RESERVED_SLUG", `slug "${slug}" is reserved`, [
      { field: "slug", message: "reserved" },
    ]);
  }
}

/** The slug rule as a JSON Schema pattern (a DNS label), for schemas that state it. */
export const SLUG_PATTERN = SLUG.source;
