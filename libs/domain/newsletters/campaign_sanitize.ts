import sanitizeHtml from "sanitize-html";

/**
 * The elements a campaign mail may carry: what mail clients render (text, lists, tables for layout,
 * images, links, inline and head styles) and nothing that runs, frames, embeds, submits or redirects
 * (no script, iframe, object, embed, form, svg, math, base, link, meta http-equiv).
 */
const EMAIL_TAGS = [
  ...sanitizeHtml.defaults.allowedTags,
  "html",
  "head",
  "body",
  "title",
  "meta",
  "style",
  "img",
  "picture",
  "source",
  "center",
  "font",
  "span",
  "div",
  "u",
  "s",
  "strike",
  "small",
  "big",
  "sub",
  "sup",
  "col",
  "colgroup",
];

const COMMON_ATTRS = [
  "style",
  "class",
  "id",
  "align",
  "valign",
  "width",
  "height",
  "bgcolor",
  "background",
  "border",
  "dir",
  "lang",
  "title",
  "role",
  "aria-*",
];

/** Options of sanitize-html for campaign mail (decision 1113). */
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: EMAIL_TAGS,
  allowedAttributes: {
    "*": COMMON_ATTRS,
    a: ["href", "name", "target", "rel"],
    img: ["src", "srcset", "sizes", "alt"],
    source: ["srcset", "sizes", "media", "type"],
    meta: ["charset", "name", "content"],
    table: ["cellpadding", "cellspacing", "summary"],
    td: ["colspan", "rowspan", "nowrap"],
    th: ["colspan", "rowspan", "nowrap", "scope"],
    col: ["span"],
    colgroup: ["span"],
    ol: ["start", "type", "reversed"],
    ul: ["type"],
    li: ["value"],
    font: ["color", "face", "size"],
  },
  // Links: the web, mail and phone; images: the web (and this service's relative /api/media paths).
  allowedSchemes: ["http", "https", "mailto", "tel"],
  allowedSchemesByTag: { img: ["http", "https"], source: ["http", "https"] },
  allowedSchemesAppliedToAttributes: ["href", "src", "srcset", "background", "cite", "action"],
  allowProtocolRelative: false,
  // <style> is needed by mail layouts; its URLs were checked against the library before this runs.
  allowVulnerableTags: true,
  disallowedTagsMode: "discard",
  transformTags: {
    // <meta http-equiv="refresh"> (a redirect) and other http-equiv pragmas lose every attribute…
    meta: (tagName, attribs) => ("http-equiv" in attribs ? { tagName, attribs: {} } : { tagName, attribs }),
  },
  // …and an empty meta goes entirely.
  exclusiveFilter: (frame) => frame.tag === "meta" && Object.keys(frame.attribs).length === 0,
};

/**
 * Campaign HTML through sanitize-html (a maintained allow-list sanitizer on htmlparser2) with the
 * email allow-list above: whatever is not on it is removed, not guessed at by patterns. URLs are
 * judged as browsers read them (entities decoded, control characters and whitespace stripped), so
 * `jav&#x09;ascript:`, `data:text/html` links, a meta refresh, SVG `<animate href>` and
 * `<iframe srcdoc>` do not survive. Run when a campaign is stored and again when it is mailed.
 */
export function sanitizeCampaignHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
