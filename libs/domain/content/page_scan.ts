import { type MediaRefBases, readMediaRef } from "@site/domain/media";
import { applyEdits, sanitizeEdits } from "./mdx_sanitize.ts";
import {
  type MdxCode,
  type MdxElement,
  MdxSyntaxError,
  type MdxUrl,
  type MdxUrlWhere,
  scanMdx,
} from "./mdx_urls.ts";

/** A media reference of page MDX: a URL that names one library key, with where it sits. */
export type PageMediaRef = {
  url: string;
  key: string;
  start: number;
  end: number;
  line: number;
  where: MdxUrlWhere;
  element?: string;
  attribute?: string;
};

/** A URL of page MDX that may be an internal link: what link storage (page_links.ts) reads. */
export type PageLinkUrl = Pick<MdxUrl, "url" | "start" | "end" | "where" | "attribute">;

/** True for a URL that may name a page of the site: a site path (not a media path) or a page reference. */
function mayNamePage(url: string): boolean {
  if (/^page:/i.test(url)) return true;
  return url.startsWith("/") && !url.startsWith("//") && !url.startsWith(MEDIA_PATH);
}

/** Something in page MDX no reader can be given: refused on write, left unsigned on read. */
export type PageMediaProblem = { ref: string; line: number; message: string };

/** What page MDX says about media, computed once per content (off the event loop, see page_scan_pool.ts). */
export type PageScan =
  | {
      ok: true;
      /** The URLs that name a library key, in source order (the first MAX_PAGE_MEDIA_REFS of refCount). */
      refs: PageMediaRef[];
      refCount: number;
      /** The first problems (at most MAX_PROBLEMS), in source order; `problemCount` counts them all. */
      problems: PageMediaProblem[];
      problemCount: number;
      /** Media elements not inside Column > Column, with their src (the first MAX_PROBLEMS of bareCount). */
      bareMedia: { line: number; src: string }[];
      bareCount: number;
      /**
       * What readers get (mdx_sanitize.ts): null when nothing had to be removed, else the content without
       * code, with `safeRefs` (the refs still in it, at their offsets there); `removed` counts the edits.
       */
      safeContent: string | null;
      safeRefs: PageMediaRef[] | null;
      removed: number;
      /** The URLs that may be links to the site's pages (site paths, `page:` references), in source order. */
      links: PageLinkUrl[];
    }
  | { ok: false; reason: string; line: number; column: number };

/** How many problems a scan lists (an error body does not grow with the content). */
export const MAX_PROBLEMS = 50;
/** The most media references one page may hold (a write refuses more; a read signs no more). */
export const MAX_PAGE_MEDIA_REFS = 1_000;

const MEDIA_PATH = "/api/media/";

/** The 1-based line of each offset, by binary search over the line starts. */
function lineIndex(content: string): (offset: number) => number {
  const starts = [0];
  for (let i = content.indexOf("\n"); i >= 0; i = content.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function countOccurrences(text: string, needles: string[]): number {
  let n = 0;
  for (const needle of needles) {
    for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  }
  return n;
}

/** The text of a stray media path as the error names it (up to the next space or quote, 200 characters). */
function strayText(content: string, at: number): string {
  const m = /[^\s"'`<>(){}[\]]{1,200}/y;
  m.lastIndex = at;
  return m.exec(content)?.[0] ?? MEDIA_PATH;
}

/** Collects problems: all are counted, the first MAX_PROBLEMS kept with their line. */
type Problems = {
  list: PageMediaProblem[];
  count: number;
  add: (ref: string, offset: number, message: string) => void;
};

function problemList(lineOf: (offset: number) => number): Problems {
  const p: Problems = {
    list: [],
    count: 0,
    add: (ref, offset, message) => {
      p.count++;
      if (p.list.length < MAX_PROBLEMS) p.list.push({ ref, line: lineOf(offset), message });
    },
  };
  return p;
}

/**
 * The media references among the URLs (the first MAX_PAGE_MEDIA_REFS kept, all counted); a URL that
 * carries a media path other than as its own path, a displayUrl, or an outside `Media` src is a problem.
 */
function mediaRefs(
  urls: MdxUrl[],
  bases: MediaRefBases,
  markers: string[],
  lineOf: (offset: number) => number,
  problems: Problems,
): { refs: PageMediaRef[]; refCount: number } {
  const refs: PageMediaRef[] = [];
  let refCount = 0;
  for (const u of urls) {
    const parsed = readMediaRef(bases, u.url);
    const inside = countOccurrences(u.url, markers);
    const isMediaSrc = u.element === "Media" && u.attribute?.toLowerCase() === "src";
    if (parsed.kind === "outside") {
      if (inside > 0)
        problems.add(
          u.url,
          u.start,
          "not a media url but carries a media path: reference a library file by its url (/api/media/<key>) alone",
        );
      else if (isMediaSrc)
        problems.add(u.url, u.start, "outside URL: embed the url of a file of this site's library");
      continue;
    }
    if (inside > 1) {
      problems.add(
        u.url,
        u.start,
        "carries another media path in its query or fragment: reference each library file by its own url",
      );
      continue;
    }
    if (parsed.kind === "path" && /(^|&)(k|t)=/.test(parsed.query)) {
      problems.add(
        u.url,
        u.start,
        "a displayUrl with a grant: persist the canonical url (/api/media/<key>) instead",
      );
      continue;
    }
    if (++refCount > MAX_PAGE_MEDIA_REFS) continue;
    refs.push({
      url: u.url,
      key: parsed.key,
      start: u.start,
      end: u.end,
      line: lineOf(u.start),
      where: u.where,
      ...(u.element !== undefined ? { element: u.element } : {}),
      ...(u.attribute !== undefined ? { attribute: u.attribute } : {}),
    });
  }
  return { refs, refCount };
}

/** Every media path written in the source must sit inside a URL the parser found: any other is a problem. */
function strayMediaPaths(content: string, markers: string[], urls: MdxUrl[], problems: Problems): void {
  const strays: number[] = [];
  for (const marker of markers) {
    for (let i = content.indexOf(marker); i >= 0; i = content.indexOf(marker, i + marker.length))
      strays.push(i);
  }
  strays.sort((a, b) => a - b);
  let u = 0;
  for (const at of strays) {
    while (u < urls.length && urls[u]!.end <= at) u++;
    const inUrl = u < urls.length && urls[u]!.start <= at;
    if (!inUrl)
      problems.add(
        strayText(content, at),
        at,
        'a media path outside an attribute, image, link or definition (text, code or an expression) is never signed for readers: write it as src="…" or ![…](…)',
      );
  }
}

/** Each `Media` not inside Column > Column (the first MAX_PROBLEMS, all counted), with its src. */
function bareMediaOf(
  elements: MdxElement[],
  urls: MdxUrl[],
  lineOf: (offset: number) => number,
): { bareMedia: { line: number; src: string }[]; bareCount: number } {
  const bareMedia: { line: number; src: string }[] = [];
  let bareCount = 0;
  for (const el of elements) {
    if (el.name !== "Media") continue;
    const p = el.parent >= 0 ? elements[el.parent]! : null;
    const gp = p && p.parent >= 0 ? elements[p.parent]! : null;
    if (p?.name === "Column" && gp?.name === "Column") continue;
    if (++bareCount > MAX_PROBLEMS) continue;
    const src = urls.slice(el.urlsFrom, el.urlsTo).find((x) => x.attribute?.toLowerCase() === "src");
    bareMedia.push({ line: lineOf(el.start), src: src?.url ?? "" });
  }
  return { bareMedia, bareCount };
}

/** The sanitized content and its references moved with it, both null when nothing is removed. */
function sanitized(
  content: string,
  code: MdxCode,
  urls: MdxUrl[],
  refs: PageMediaRef[],
): { safeContent: string | null; safeRefs: PageMediaRef[] | null; removed: number } {
  const edits = sanitizeEdits(code, urls);
  if (edits.length === 0) return { safeContent: null, safeRefs: null, removed: 0 };
  const { text, map } = applyEdits(content, edits);
  const safeRefs: PageMediaRef[] = [];
  for (const r of refs) {
    const moved = map(r.start, r.end);
    if (moved) safeRefs.push({ ...r, start: moved[0], end: moved[1] });
  }
  return { safeContent: text, safeRefs, removed: edits.length };
}

/**
 * Reads page MDX for media, by parsing it (mdx_urls.ts): each URL that names a library key becomes a
 * reference; problems are the ways content could smuggle a path past the check or past signing:
 * - a URL that carries a media path other than as its own path (`/api/media/a?x=/api/media/b`, a link to
 *   another host whose query names one), or names `/api/media/` on another host;
 * - a media path outside any URL (text, code, an expression): never signed, so never readable;
 * - a displayUrl (grant `k` or share token `t`) stored instead of the canonical url;
 * - a `Media` whose `src` is not a library file.
 * Pure and synchronous: callers run it in a worker (page_scan_pool.ts).
 */
export function analyzePage(content: string, bases: MediaRefBases): PageScan {
  let scan: ReturnType<typeof scanMdx>;
  try {
    scan = scanMdx(content);
  } catch (e) {
    if (e instanceof MdxSyntaxError) return { ok: false, reason: e.reason, line: e.line, column: e.column };
    throw e;
  }
  const { urls, elements, code } = scan;
  const lineOf = lineIndex(content);
  const markers = [MEDIA_PATH, ...bases.legacyPrefixes];
  const problems = problemList(lineOf);
  const { refs, refCount } = mediaRefs(urls, bases, markers, lineOf, problems);
  strayMediaPaths(content, markers, urls, problems);
  const { bareMedia, bareCount } = bareMediaOf(elements, urls, lineOf);
  problems.list.sort((a, b) => a.line - b.line);
  return {
    ok: true,
    refs,
    refCount,
    problems: problems.list,
    problemCount: problems.count,
    bareMedia,
    bareCount,
    ...sanitized(content, code, urls, refs),
    links: urls
      .filter((x) => mayNamePage(x.url))
      .map((x) => ({
        url: x.url,
        start: x.start,
        end: x.end,
        where: x.where,
        ...(x.attribute !== undefined ? { attribute: x.attribute } : {}),
      })),
  };
}
