import type { MediaRefBases } from "@site/domain/media";
import { decodeString } from "micromark-util-decode-string";

const MEDIA_PREFIX = "/api/media/";
/** Where a media path written in text ends: whitespace, quotes, brackets and Markdown punctuation. */
const PATH_END = /[\s"'<>()[\]{}`\\|^]/;
/** Punctuation that closes a sentence rather than the path. */
const TRAILING = /[.,;:!?*_~]+$/;

/**
 * Every media path written in a text value (plain text, Markdown, a URL), in the form a reader's
 * renderer would see it: character references and backslash escapes decoded first (as Markdown does),
 * then each `/api/media/…` path (bare or under PUBLIC_BASE_URL) and each legacy storage URL read up to
 * the first whitespace, quote or bracket. Linear: the text is searched once, left to right. Used to hold
 * collection `text`, `richtext` and `link` values to the same library rule as every other media
 * reference (decision 0611), and to find what a template clone's content carries (decision 0610).
 */
export function mediaRefsInText(bases: MediaRefBases, text: string): string[] {
  const decoded = text.includes("&") || text.includes("\\") ? decodeString(text) : text;
  const prefixes = [MEDIA_PREFIX, ...bases.legacyPrefixes].filter((p) => p !== "");
  const refs: string[] = [];
  // The next occurrence of each prefix at or after `at`, searched again only once passed (-1: none left).
  const next = prefixes.map((p) => decoded.indexOf(p));
  let at = 0;
  while (at < decoded.length) {
    let found = -1;
    let prefix = "";
    for (let k = 0; k < prefixes.length; k++) {
      if (next[k]! >= 0 && next[k]! < at) next[k] = decoded.indexOf(prefixes[k]!, at);
      const i = next[k]!;
      if (i >= 0 && (found < 0 || i < found)) {
        found = i;
        prefix = prefixes[k]!;
      }
    }
    if (found < 0) break;
    let end = found + prefix.length;
    while (end < decoded.length && !PATH_END.test(decoded[end]!)) end++;
    const rest = decoded.slice(found + prefix.length, end).replace(TRAILING, "");
    refs.push(`${prefix}${rest}`);
    at = Math.max(end, found + 1);
  }
  return refs;
}
