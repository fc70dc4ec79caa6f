import { escapeHtml } from "@site/domain/core";
import { type DefaultTreeAdapterTypes, parse } from "parse5";

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.Document;
type Element = DefaultTreeAdapterTypes.Element;

/** A URL of campaign HTML: a resource the mail client loads by itself (an image), or a link. */
export type HtmlUrl = { url: string; kind: "resource" | "link"; line: number; where: string };

/** Something campaign HTML may not hold (a script, an event handler, a javascript: URL). */
export type HtmlProblem = { line: number; where: string; message: string };

/** A part of the source that a rewrite replaces: an attribute, or the text of a style element. */
type Slot = { start: number; end: number; render: (map: (url: string) => string) => string };

/** Campaign HTML read once: its URLs, its problems, and the places a rewrite replaces. */
export type HtmlScan = { urls: HtmlUrl[]; problems: HtmlProblem[]; slots: Slot[] };

/** Attributes whose URL the mail client loads without a click. */
const RESOURCE_ATTRS = new Set(["src", "poster", "background", "data", "lowsrc", "dynsrc"]);
/** Attributes that hold a link someone clicks. */
const LINK_ATTRS = new Set(["href", "action", "formaction", "cite", "longdesc", "xlink:href"]);
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)/gi;

/** Replaces each `url(…)` of CSS text through `map`, listing each URL in `found`. */
function cssUrls(css: string, map: ((url: string) => string) | null, found?: (url: string) => void): string {
  return css.replace(
    CSS_URL,
    (whole, dq: string | undefined, sq: string | undefined, bare: string | undefined) => {
      const url = (dq ?? sq ?? bare ?? "").trim();
      if (!url) return whole;
      found?.(url);
      return map ? `url("${map(url).replace(/"/g, "%22")}")` : whole;
    },
  );
}

/** The candidates of a srcset (the HTML standard's parsing: URL, then descriptors up to a comma). */
function srcsetUrls(value: string): { url: string; descriptor: string }[] {
  const out: { url: string; descriptor: string }[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /[\s,]/.test(value[i]!)) i++;
    let j = i;
    while (j < value.length && !/\s/.test(value[j]!)) j++;
    let url = value.slice(i, j);
    i = j;
    let descriptor = "";
    if (url.endsWith(",")) url = url.replace(/,+$/, "");
    else {
      const comma = value.indexOf(",", i);
      const end = comma < 0 ? value.length : comma;
      descriptor = value.slice(i, end).trim();
      i = end + 1;
    }
    if (url) out.push({ url, descriptor });
  }
  return out;
}

/**
 * Reads campaign HTML with a real HTML parser (parse5, the WHATWG algorithm browsers use), never by
 * line patterns: every URL of every attribute (src, srcset, poster, background, href…), of inline
 * styles and style elements, with the line it sits on; scripts, event handlers and javascript: URLs
 * are problems (no mail client runs them, and the preview must not).
 */
export function scanCampaignHtml(html: string): HtmlScan {
  const doc = parse(html, { sourceCodeLocationInfo: true });
  const urls: HtmlUrl[] = [];
  const problems: HtmlProblem[] = [];
  const slots: Slot[] = [];
  const visit = (node: Node) => {
    if ("tagName" in node) element(node);
    const children = "childNodes" in node ? node.childNodes : [];
    for (const child of children) visit(child);
    if ("content" in node && node.content) for (const child of node.content.childNodes) visit(child);
  };
  const element = (el: Element) => {
    const loc = el.sourceCodeLocation;
    const line = loc?.startLine ?? 1;
    const tag = el.tagName;
    if (tag === "script")
      problems.push({ line, where: "<script>", message: "scripts are not allowed in mail" });
    if (tag === "style") {
      const text = el.childNodes[0];
      if (text && "value" in text && text.sourceCodeLocation) {
        const { startOffset, endOffset } = text.sourceCodeLocation;
        const css = text.value;
        cssUrls(css, null, (url) => urls.push({ url, kind: "resource", line, where: "<style>" }));
        slots.push({ start: startOffset, end: endOffset, render: (map) => cssUrls(css, map) });
      }
    }
    for (const attr of el.attrs) {
      const name = attr.name.toLowerCase();
      const where = `<${tag} ${name}>`;
      const span = loc?.attrs?.[attr.name];
      if (name.startsWith("on")) {
        problems.push({ line, where, message: "event handler attributes are not allowed in mail" });
        continue;
      }
      const value = attr.value;
      let found: { url: string; kind: HtmlUrl["kind"] }[] = [];
      let render: Slot["render"] | null = null;
      if (name === "style") {
        cssUrls(value, null, (url) => found.push({ url, kind: "resource" }));
        render = (map) => `style="${escapeHtml(cssUrls(value, map))}"`;
      } else if (name === "srcset" || name === "imagesrcset") {
        const candidates = srcsetUrls(value);
        found = candidates.map((c) => ({ url: c.url, kind: "resource" }));
        render = (map) =>
          `${name}="${escapeHtml(candidates.map((c) => [map(c.url), c.descriptor].filter(Boolean).join(" ")).join(", "))}"`;
      } else if (RESOURCE_ATTRS.has(name) || LINK_ATTRS.has(name)) {
        const url = value.trim();
        if (!url) continue;
        // <link href> (a stylesheet, an icon) and <image href> load without a click.
        const loads = RESOURCE_ATTRS.has(name) || tag === "link" || tag === "image" || tag === "use";
        found = [{ url, kind: loads ? "resource" : "link" }];
        render = (map) => `${name}="${escapeHtml(map(url))}"`;
      }
      for (const f of found) {
        // As a browser reads a URL: control characters and whitespace (`jav&#x09;ascript:`) removed.
        if (/^(javascript|vbscript):/i.test(f.url.replace(/[\u0000-\u0020\u007f]/g, ""))) {
          problems.push({ line, where, message: "javascript: URLs are not allowed in mail" });
          continue;
        }
        urls.push({ url: f.url, kind: f.kind, line, where });
      }
      if (render && span && found.length > 0)
        slots.push({ start: span.startOffset, end: span.endOffset, render });
    }
  };
  visit(doc);
  slots.sort((a, b) => a.start - b.start);
  return { urls, problems, slots };
}

/** How deep campaign HTML may nest its elements (a mail layout of nested tables needs a few dozen). */
export const MAX_HTML_DEPTH = 256;

/** Elements without content, and elements whose end tag may be left out (they do not nest by repeating). */
const NO_NESTING = new Set(
  "area base br col embed hr img input link meta source track wbr p li td th tr dt dd option optgroup thead tbody tfoot colgroup rb rt rp".split(
    " ",
  ),
);

/**
 * The first place where campaign HTML nests deeper than MAX_HTML_DEPTH, found by one linear pass over
 * its tags before any parser or tree walk sees it (decision 0011: input is bounded at the edge). The
 * count is an upper bound of the parsed tree's depth for ordinary markup; null when within bounds.
 */
export function tooDeep(html: string, max = MAX_HTML_DEPTH): { line: number } | null {
  const tag = /<(\/?)([a-zA-Z][^\s/>]*)[^>]*?(\/?)>/g;
  let depth = 0;
  for (const m of html.matchAll(tag)) {
    const name = m[2]!.toLowerCase();
    if (NO_NESTING.has(name) || m[3] === "/") continue;
    if (m[1] === "/") depth = Math.max(0, depth - 1);
    else if (++depth > max) return { line: html.slice(0, m.index).split("\n").length };
  }
  return null;
}

/** The HTML with every scanned URL passed through `map` (unchanged when `map` returns it as is). */
export function rewriteCampaignHtml(html: string, scan: HtmlScan, map: (url: string) => string): string {
  let out = "";
  let at = 0;
  for (const slot of scan.slots) {
    if (slot.start < at) continue;
    out += html.slice(at, slot.start) + slot.render(map);
    at = slot.end;
  }
  return out + html.slice(at);
}

const BLOCK = new Set([
  "p",
  "div",
  "br",
  "tr",
  "table",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "li",
  "ul",
  "ol",
  "section",
  "article",
  "header",
  "footer",
  "blockquote",
  "hr",
  "pre",
]);

/** The plain-text part of a mail: the HTML's words, links as `text (url)`, images as their alt text. */
export function htmlToText(html: string): string {
  const doc = parse(html);
  let out = "";
  const visit = (node: Node) => {
    if ("tagName" in node) {
      const tag = node.tagName;
      if (tag === "script" || tag === "style" || tag === "head" || tag === "title") return;
      if (tag === "img") {
        const alt = node.attrs.find((a) => a.name === "alt")?.value.trim();
        if (alt) out += `[${alt}]`;
        return;
      }
      if (BLOCK.has(tag)) out += "\n";
      if (tag === "li") out += "- ";
      const before = out.length;
      for (const child of node.childNodes) visit(child);
      if (tag === "a") {
        const href = node.attrs.find((a) => a.name === "href")?.value.trim();
        const text = out.slice(before).trim();
        if (href && /^https?:/i.test(href) && text !== href) out += ` (${href})`;
      }
      if (BLOCK.has(tag)) out += "\n";
      return;
    }
    if ("value" in node && node.nodeName === "#text") {
      out += node.value.replace(/\s+/g, " ");
      return;
    }
    if ("childNodes" in node) for (const child of node.childNodes) visit(child);
  };
  visit(doc);
  return `${out
    .split("\n")
    .map((l) => l.trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()}\n`;
}
