import { type Database, pages, type Tx } from "@site/db";
import { eq } from "drizzle-orm";

/** The longest href accepted anywhere (navigation, footer, link fields, the translate route). */
export const MAX_HREF = 2000;

/** What an href names, read without the database. */
export type ParsedHref =
  | { kind: "page"; pageId: string; suffix: string }
  | { kind: "path"; path: string; suffix: string }
  | { kind: "media" }
  | { kind: "external" }
  | { kind: "anchor" }
  | { kind: "invalid"; reason: string };

const PAGE_REF = /^page:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})([?#].*)?$/i;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const EXTERNAL_SCHEMES = new Set(["http", "https", "mailto", "tel", "sms"]);
const SPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;

/** Splits `/about?x#y` into the path (without a trailing slash) and its `?…`/`#…` suffix. */
function splitPath(href: string): { path: string; suffix: string } {
  const cut = href.search(/[?#]/);
  let path = cut < 0 ? href : href.slice(0, cut);
  const suffix = cut < 0 ? "" : href.slice(cut);
  if (path.length > 1 && path.endsWith("/")) path = path.replace(/\/+$/, "") || "/";
  return { path, suffix };
}

/**
 * Reads an href as written in navigation, footer, a link field or page MDX: a page reference
 * (`page:<id>`, optional `#anchor`/`?query`), a site path (`/about`), a media path, an external URL
 * (http, https, mailto, tel, sms), an in-page anchor, or something refused (and why).
 */
export function parseHref(href: string): ParsedHref {
  if (href === "") return { kind: "invalid", reason: "empty" };
  if (href.length > MAX_HREF) return { kind: "invalid", reason: `at most ${MAX_HREF} characters` };
  if (SPACE_OR_CONTROL.test(href))
    return { kind: "invalid", reason: "spaces and control characters are not allowed" };
  const ref = PAGE_REF.exec(href);
  if (ref) return { kind: "page", pageId: ref[1]!.toLowerCase(), suffix: ref[2] ?? "" };
  if (/^page:/i.test(href)) return { kind: "invalid", reason: "a page reference is page:<page id (UUID)>" };
  if (href.startsWith("#")) return { kind: "anchor" };
  if (href.startsWith("//")) return { kind: "external" };
  if (href.startsWith("/api/media/")) return { kind: "media" };
  if (href.startsWith("/")) return { kind: "path", ...splitPath(href) };
  const scheme = SCHEME.exec(href)?.[1]?.toLowerCase();
  if (scheme && EXTERNAL_SCHEMES.has(scheme)) return { kind: "external" };
  if (scheme) return { kind: "invalid", reason: `the ${scheme}: scheme is not allowed` };
  return {
    kind: "invalid",
    reason: "write a site path (/about), a page reference (page:<id>) or a full URL",
  };
}

/** The pages of one site by id and by path: what turns paths into references and back. */
export type PageIndex = { pathOf: Map<string, string>; idOf: Map<string, string> };

/** Builds a page index from (id, path) rows. */
export function pageIndexOf(rows: { id: string; path: string }[]): PageIndex {
  const pathOf = new Map<string, string>();
  const idOf = new Map<string, string>();
  for (const r of rows) {
    pathOf.set(r.id, r.path);
    idOf.set(r.path, r.id);
  }
  return { pathOf, idOf };
}

/** Loads the page index of a site (one query). */
export async function loadPageIndex(db: Database | Tx, siteId: string): Promise<PageIndex> {
  return pageIndexOf(
    await db.select({ id: pages.id, path: pages.path }).from(pages).where(eq(pages.siteId, siteId)),
  );
}

/**
 * The form an href is stored in: a site path naming a page becomes that page's reference (its suffix
 * kept); everything else is stored as written (a reference in lower case).
 */
export function storeHref(href: string, index: PageIndex): string {
  const p = parseHref(href);
  if (p.kind === "page") return `page:${p.pageId}${p.suffix}`;
  if (p.kind === "path") {
    const id = index.idOf.get(p.path);
    if (id) return `page:${id}${p.suffix}`;
  }
  return href;
}

/** The form an href is read in: a reference to a page of the site becomes its current path. */
export function readHref(stored: string, index: PageIndex): string {
  if (!stored.startsWith("page:")) return stored;
  const p = parseHref(stored);
  if (p.kind !== "page") return stored;
  const path = index.pathOf.get(p.pageId);
  return path === undefined ? stored : `${path}${p.suffix}`;
}

/** True when a stored href is internal and names no page of the site now (a deleted page, an unknown path). */
export function isBrokenHref(stored: string, index: PageIndex): boolean {
  const p = parseHref(stored);
  if (p.kind === "page") return !index.pathOf.has(p.pageId);
  if (p.kind === "path") return !index.idOf.has(p.path);
  return false;
}

/** Rewrites page references through `map` (old page id → new page id): what a template clone does. */
export function remapHref(stored: string, map: Map<string, string>): string {
  if (!stored.startsWith("page:")) return stored;
  const p = parseHref(stored);
  if (p.kind !== "page") return stored;
  const to = map.get(p.pageId);
  return to ? `page:${to}${p.suffix}` : stored;
}
