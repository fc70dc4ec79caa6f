import type { MdxCode, MdxUrl } from "./mdx_urls.ts";
import { browserUrl, URL_ATTRIBUTES } from "./url_values.ts";

/**
 * What page MDX may carry to a reader (a site renderer, a dashboard): decision 0312. Page content is
 * stored as written; what leaves in public reads and in members' displayContent has removed whatever
 * would run code or navigate to script in a renderer that compiles MDX:
 * - ESM (`import`/`export`) and `{…}` expressions (an MDX compiler evaluates them; `{/* comments *\/}`
 *   stay), spread attributes, and attribute values that are expressions other than a plain string;
 * - HTML elements outside HTML_ELEMENTS (`script`, `style`, `iframe`, `object`, `form`, `svg`, …):
 *   their tags are removed, their text stays as text; tag names with `.` or `:` likewise. Components
 *   (`Column`, `Media`, any capitalized name) are the renderer's own allow-list — its components map —
 *   and pass; their attributes are held to the same rules;
 * - event-handler attributes (`on…`), `dangerouslySetInnerHTML`, `srcdoc`;
 * - any attribute whose value is a `javascript:` or `vbscript:` URL, a URL attribute (`href`, `src`, …),
 *   link, image or definition whose value is a `data:` URL (except `data:image/{png,gif,jpeg,webp,avif}`),
 *   however it is written (character references, tabs, newlines, case): attributes are removed, Markdown
 *   destinations become `#`.
 */

/** HTML elements a page may use (formatting, media, tables, sections). */
export const HTML_ELEMENTS = new Set(
  (
    "a abbr address article aside audio b bdi bdo blockquote br caption cite code col colgroup data dd del " +
    "details dfn div dl dt em figcaption figure footer h1 h2 h3 h4 h5 h6 header hgroup hr i img ins kbd li " +
    "main mark nav ol p picture pre q rp rt ruby s samp section small source span strong sub summary sup " +
    "table tbody td tfoot th thead time tr track u ul var video wbr"
  ).split(" "),
);

const DENIED_ATTRIBUTES = new Set(["dangerouslysetinnerhtml", "srcdoc"]);
const SCRIPT_URL = /^(?:javascript|vbscript):/i;
const DATA_URL = /^data:/i;
const SAFE_DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp|avif)[;,]/i;

/** One change to the source: replace [start, end) with `text`. */
export type MdxEdit = { start: number; end: number; text: string };

/**
 * Whether a value would run script when followed or loaded as a URL: a `javascript:`/`vbscript:` URL,
 * or (`asUrl`: a value known to be a URL) a `data:` URL other than a raster image.
 */
export function isDangerousUrl(value: string, asUrl = true): boolean {
  const url = browserUrl(value);
  if (SCRIPT_URL.test(url)) return true;
  return asUrl && DATA_URL.test(url) && !SAFE_DATA_IMAGE.test(url);
}

function allowedTag(name: string): boolean {
  if (name === "") return true; // fragment
  if (/^[A-Z][A-Za-z0-9_]*$/.test(name)) return true; // a component: the renderer maps it
  return HTML_ELEMENTS.has(name);
}

/** The edits that remove what may not leave (see the module comment), in source order, not overlapping. */
export function sanitizeEdits(code: MdxCode, urls: MdxUrl[]): MdxEdit[] {
  const edits: MdxEdit[] = [];
  for (const r of code.esm) edits.push({ start: r.start, end: r.end, text: "" });
  for (const e of code.expressions) if (!e.empty) edits.push({ start: e.start, end: e.end, text: "" });
  const removedTag = code.tags.map((t) => !allowedTag(t.name));
  code.tags.forEach((t, i) => {
    if (removedTag[i]) edits.push({ start: t.start, end: t.end, text: "" });
  });
  for (const a of code.attributes) {
    if (removedTag[a.tag]) continue;
    const name = a.name.toLowerCase();
    const remove =
      a.kind === "spread" ||
      a.kind === "expression" ||
      /^on/.test(name) ||
      DENIED_ATTRIBUTES.has(name) ||
      (a.value !== null && isDangerousUrl(a.value, URL_ATTRIBUTES.has(name) || name === "srcset"));
    if (remove) edits.push({ start: a.start, end: a.end, text: "" });
  }
  for (const u of urls) {
    if (u.where === "markdown-link" || u.where === "markdown-image" || u.where === "definition") {
      if (isDangerousUrl(u.url)) edits.push({ start: u.start, end: u.end, text: "#" });
    }
  }
  return normalize(edits);
}

/** Sorted by start; an edit inside an earlier one (an attribute of a removed tag) is dropped. */
function normalize(edits: MdxEdit[]): MdxEdit[] {
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: MdxEdit[] = [];
  for (const e of edits) {
    const last = out[out.length - 1];
    if (last && e.start < last.end) continue;
    out.push(e);
  }
  return out;
}

/**
 * Applies sorted, non-overlapping edits; `map` moves an offset range of the source to the result, or
 * gives null when an edit removed or replaced any of it.
 */
export function applyEdits(
  content: string,
  edits: MdxEdit[],
): { text: string; map: (start: number, end: number) => [number, number] | null } {
  const parts: string[] = [];
  let at = 0;
  const shifts: { end: number; delta: number }[] = [];
  let delta = 0;
  for (const e of edits) {
    parts.push(content.slice(at, e.start), e.text);
    delta += e.text.length - (e.end - e.start);
    shifts.push({ end: e.end, delta });
    at = e.end;
  }
  parts.push(content.slice(at));
  const map = (start: number, end: number): [number, number] | null => {
    // The last edit ending at or before `start` gives the shift; any edit reaching into the range voids it.
    let lo = 0;
    let hi = edits.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edits[mid]!.end <= start) lo = mid + 1;
      else hi = mid;
    }
    const next = edits[lo];
    if (next && next.start < end) return null;
    const d = lo > 0 ? shifts[lo - 1]!.delta : 0;
    return [start + d, end + d];
  };
  return { text: parts.join(""), map };
}
