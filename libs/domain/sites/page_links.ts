import type { PageLinkUrl } from "@site/domain/content";
import { type PageIndex, parseHref } from "./links.ts";

/**
 * Where an internal link sits in stored page MDX: `[start, end, kind]`, kind 0 for a page reference
 * (`page:<id>`, always 41 characters), 1 for a site path that named no page when written (kept for the
 * broken-links listing). Reads translate by these ranges, never by parsing again.
 */
export type LinkSpan = [number, number, 0 | 1];

const REF_LENGTH = "page:".length + 36;
/** Attributes whose URL is a resource to load, not a link to follow: never rewritten. */
const RESOURCE_ATTRIBUTES = new Set(["src", "srcset", "imagesrcset", "poster", "background", "data"]);

function isLink(u: PageLinkUrl): boolean {
  if (u.where === "markdown-image") return false;
  return !(u.attribute && RESOURCE_ATTRIBUTES.has(u.attribute.toLowerCase()));
}

/**
 * Page MDX in its stored form: each link (Markdown link, definition, or a JSX/HTML attribute that is not
 * a resource) to a site path naming a page has its path replaced, in place, by the page's reference
 * (`/about#team` → `page:<id>#team`); the suffix and everything around stay as written. Links whose
 * source text is escaped or split are left as they are. Returns the content and its link spans.
 */
export function storePageLinks(
  content: string,
  urls: PageLinkUrl[],
  index: PageIndex,
): { content: string; links: LinkSpan[] } {
  let out = "";
  let last = 0;
  const links: LinkSpan[] = [];
  for (const u of urls) {
    if (!isLink(u) || u.start < last) continue;
    const parsed = parseHref(u.url);
    const raw = content.slice(u.start, u.end);
    if (parsed.kind === "page") {
      const ref = `page:${parsed.pageId}`;
      if (raw.slice(0, REF_LENGTH).toLowerCase() !== ref) continue;
      out += content.slice(last, u.start);
      links.push([out.length, out.length + REF_LENGTH, 0]);
      out += ref;
      last = u.start + REF_LENGTH;
      continue;
    }
    if (parsed.kind !== "path") continue;
    // Only the path as written is replaced (a trailing slash and the suffix stay the author's).
    const cut = u.url.search(/[?#]/);
    const written = cut < 0 ? u.url : u.url.slice(0, cut);
    if (!raw.startsWith(written)) continue;
    const id = index.idOf.get(parsed.path);
    if (id && !raw.startsWith(parsed.path)) continue;
    out += content.slice(last, u.start);
    if (id) {
      links.push([out.length, out.length + REF_LENGTH, 0]);
      out += `page:${id}`;
      last = u.start + parsed.path.length;
    } else {
      links.push([out.length, out.length + written.length, 1]);
      out += written;
      last = u.start + written.length;
    }
  }
  out += content.slice(last);
  return { content: out, links };
}

/** Reads the stored link spans of a row (whatever JSON it holds), keeping only well-formed ones. */
export function linkSpansOf(raw: unknown, content: string): LinkSpan[] {
  if (!Array.isArray(raw)) return [];
  const spans: LinkSpan[] = [];
  let last = 0;
  for (const s of raw) {
    if (!Array.isArray(s) || s.length !== 3) continue;
    const [start, end, kind] = s as unknown[];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || (kind !== 0 && kind !== 1)) continue;
    const a = start as number;
    const b = end as number;
    if (a < last || b <= a || b > content.length) continue;
    if (kind === 0 && (b - a !== REF_LENGTH || !content.startsWith("page:", a))) continue;
    spans.push([a, b, kind]);
    last = b;
  }
  return spans;
}

/** Rewrites the page references of stored content through `to` (a reference's page id → its text). */
function spliceRefs(content: string, spans: LinkSpan[], to: (pageId: string) => string | undefined): string {
  let out = "";
  let last = 0;
  for (const [start, end, kind] of spans) {
    if (kind !== 0) continue;
    const text = to(content.slice(start + 5, end));
    if (text === undefined) continue;
    out += content.slice(last, start) + text;
    last = end;
  }
  return last === 0 ? content : out + content.slice(last);
}

/** Stored page MDX as read: each reference to a page of the site becomes its current path. */
export function readPageLinks(content: string, spans: LinkSpan[], index: PageIndex): string {
  return spliceRefs(content, spans, (id) => index.pathOf.get(id));
}

/** Stored page MDX with its references pointed at other pages (a template clone's own); spans stay valid. */
export function remapPageLinks(content: string, spans: LinkSpan[], map: Map<string, string>): string {
  return spliceRefs(content, spans, (id) => {
    const to = map.get(id);
    return to ? `page:${to}` : undefined;
  });
}

/** The links of stored page MDX that name no page now: references to deleted pages, paths of no page. */
export function brokenPageLinks(content: string, spans: LinkSpan[], index: PageIndex): string[] {
  const broken: string[] = [];
  for (const [start, end] of spans) {
    const text = content.slice(start, end);
    const parsed = parseHref(text);
    const names =
      parsed.kind === "page"
        ? index.pathOf.has(parsed.pageId)
        : parsed.kind === "path" && index.idOf.has(parsed.path);
    if (!names) broken.push(text);
  }
  return broken;
}
