import { decodeNamedCharacterReference } from "decode-named-character-reference";

/*
 * How the value of a URL-bearing attribute is read, as a browser reads it: which attributes hold one
 * URL, a srcset or a list of URLs; character references decoded with the source range of each
 * character kept (so that a URL can be replaced in place); and what the URL parser strips.
 */

/** Attributes whose value is one URL (lowercase). */
export const URL_ATTRIBUTES = new Set([
  "src",
  "href",
  "poster",
  "action",
  "formaction",
  "data",
  "cite",
  "background",
  "longdesc",
  "manifest",
  "icon",
  "codebase",
  "xlink:href",
  "xlinkhref",
]);
/** Attributes whose value is a srcset (comma-separated image candidates). */
export const SRCSET_ATTRIBUTES = new Set(["srcset", "imagesrcset"]);
/** Attributes whose value is a space-separated list of URLs. */
export const URL_LIST_ATTRIBUTES = new Set(["ping", "archive"]);

/** A value that reads as a URL: no spaces, and a scheme, a path (`/`, `./`, `../`, `//host`) or a query. */
export const LOOKS_LIKE_URL = /^(?:[a-z][a-z0-9+.-]*:|\.{0,2}\/|\?)[^ \t\n\r\f]*$/i;

const TAB_OR_NEWLINE = /[\t\n\r]/g;
// The URL parser trims C0 controls and space at both ends.
const EDGE_CONTROLS = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/** What the WHATWG URL parser does to its input before reading it. */
export function browserUrl(value: string): string {
  return value.replace(TAB_OR_NEWLINE, "").replace(EDGE_CONTROLS, "");
}

/** A decoded string and, for each of its characters, the source range [from, to) it came from. */
export type Mapped = { text: string; from: number[]; to: number[] };

/** Decodes HTML character references (as JSX does in attribute strings), keeping source offsets. */
export function decodeReferences(content: string, chunks: { start: number; end: number }[]): Mapped {
  let text = "";
  const from: number[] = [];
  const to: number[] = [];
  const reference = /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([a-zA-Z][a-zA-Z0-9]{0,31}));/y;
  for (const c of chunks) {
    let i = c.start;
    while (i < c.end) {
      if (content.charCodeAt(i) === 38 /* & */) {
        reference.lastIndex = i;
        const m = reference.exec(content);
        if (m && reference.lastIndex <= c.end) {
          let decoded: string | false = false;
          if (m[1] !== undefined || m[2] !== undefined) {
            const code = Number.parseInt(m[1] ?? m[2]!, m[1] !== undefined ? 16 : 10);
            decoded = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\uFFFD";
          } else decoded = decodeNamedCharacterReference(m[3]!);
          if (decoded !== false) {
            for (let k = 0; k < decoded.length; k++) {
              from.push(i);
              to.push(reference.lastIndex);
            }
            text += decoded;
            i = reference.lastIndex;
            continue;
          }
        }
      }
      text += content[i];
      from.push(i);
      to.push(i + 1);
      i++;
    }
  }
  return { text, from, to };
}

const isSpace = (ch: string) => ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || ch === "\f";

/** The image candidate URLs of a srcset value, as [start, end) ranges of the decoded text (HTML's rules). */
export function srcsetRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (isSpace(text[i]!) || text[i] === ",")) i++;
    if (i >= text.length) break;
    const start = i;
    while (i < text.length && !isSpace(text[i]!)) i++;
    let end = i;
    let endsCandidate = false;
    while (end > start && text[end - 1] === ",") {
      end--;
      endsCandidate = true;
    }
    if (end > start) out.push([start, end]);
    if (endsCandidate) continue;
    // Descriptors up to the next comma outside parentheses.
    let depth = 0;
    while (i < text.length) {
      const ch = text[i]!;
      if (ch === "(") depth++;
      else if (ch === ")") depth = Math.max(0, depth - 1);
      else if (ch === "," && depth === 0) break;
      i++;
    }
  }
  return out;
}

/** The whitespace-separated URLs of a list value, as [start, end) ranges of the decoded text. */
export function listRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  for (const m of text.matchAll(/[^ \t\n\r\f]+/g)) out.push([m.index, m.index + m[0].length]);
  return out;
}
