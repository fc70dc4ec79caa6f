import { parse, postprocess, preprocess } from "micromark";
import { mdxjs } from "micromark-extension-mdxjs";
import { decodeString } from "micromark-util-decode-string";
import {
  browserUrl,
  decodeReferences,
  LOOKS_LIKE_URL,
  listRanges,
  type Mapped,
  SRCSET_ATTRIBUTES,
  srcsetRanges,
  URL_ATTRIBUTES,
  URL_LIST_ATTRIBUTES,
} from "./url_values.ts";

export { browserUrl, URL_ATTRIBUTES } from "./url_values.ts";

/** Where in MDX a URL was written. */
export type MdxUrlWhere =
  | "jsx-attribute"
  | "markdown-image"
  | "markdown-link"
  | "definition"
  | "html-attribute";

/**
 * One URL-bearing occurrence in page MDX. `content.slice(start, end)` is the source text of the URL as
 * written (escapes, character references and, for a value split over lines, the line break and any
 * container prefix included): replacing that range replaces the URL in place. `url` is the value a
 * browser would request: character references and escapes decoded, ASCII tab and newline removed and
 * surrounding spaces trimmed (as the URL parser does). `element` and `attribute` name the JSX element
 * and attribute; an element whose name starts lowercase (`img`, `a`, `video`) is an HTML element and is
 * reported as `html-attribute`, a component (`Media`) as `jsx-attribute`.
 */
export type MdxUrl = {
  url: string;
  start: number;
  end: number;
  where: MdxUrlWhere;
  attribute?: string;
  element?: string;
};

/** Page content that is not valid MDX; `line` and `column` are 1-based, `offset` 0-based. */
export class MdxSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    readonly offset: number,
  ) {
    super(`${line}:${column}: ${reason}`);
    this.name = "MdxSyntaxError";
  }
}

type Attr = {
  name: string;
  chunks: { start: number; end: number }[];
  literal: boolean;
  estree?: unknown;
  expressionStart?: number;
  expressionEnd?: number;
};

const LITERAL_VALUE = /^mdxJsx(?:Flow|Text)TagAttributeValueLiteralValue$/;

function syntaxError(content: string, e: unknown): MdxSyntaxError | null {
  if (e instanceof RangeError) {
    // Recursion in the expression parser: nesting deeper than the stack.
    return new MdxSyntaxError("content is nested too deeply to parse", 1, 1, 0);
  }
  if (e && typeof e === "object" && "reason" in e && typeof (e as { reason: unknown }).reason === "string") {
    const m = e as { reason: string; line?: number; column?: number; place?: unknown };
    const place = m.place as { line?: number; column?: number; offset?: number; start?: { offset?: number } };
    const line = m.line ?? place?.line ?? 1;
    const column = m.column ?? place?.column ?? 1;
    let offset = place?.offset ?? place?.start?.offset;
    if (offset === undefined) {
      offset = 0;
      for (let l = 1; l < line; l++) {
        const nl = content.indexOf("\n", offset);
        if (nl < 0) break;
        offset = nl + 1;
      }
      offset += column - 1;
    }
    return new MdxSyntaxError(m.reason, line, column, offset);
  }
  return null;
}

/** The part of a micromark token read here. */
type Token = { type: string; start: { offset: number }; end: { offset: number }; estree?: unknown };

/** Parses MDX into micromark events; MdxSyntaxError when it is not valid MDX. */
function events(content: string): ["enter" | "exit", Token, unknown][] {
  try {
    return postprocess(
      parse({ extensions: [mdxjs()] })
        .document()
        .write(preprocess()(content, undefined, true)),
    );
  } catch (e) {
    throw syntaxError(content, e) ?? e;
  }
}

/** A string literal (or a template literal without substitutions) of an attribute expression. */
function expressionString(estree: unknown): { value: string; start: number; end: number } | null {
  const program = estree as { body?: { type: string; expression?: Record<string, unknown> }[] } | undefined;
  const body = program?.body;
  if (body?.length !== 1 || body[0]!.type !== "ExpressionStatement") return null;
  const e = body[0]!.expression as {
    type: string;
    value?: unknown;
    start: number;
    end: number;
    expressions?: unknown[];
    quasis?: { value: { cooked: string | null } }[];
  };
  if (e.type === "Literal" && typeof e.value === "string")
    return { value: e.value, start: e.start + 1, end: e.end - 1 };
  if (e.type === "TemplateLiteral" && e.expressions?.length === 0 && e.quasis?.[0]?.value.cooked != null)
    return { value: e.quasis[0].value.cooked, start: e.start + 1, end: e.end - 1 };
  return null;
}

function attributeUrls(content: string, element: string, attr: Attr, out: MdxUrl[]): void {
  const name = attr.name;
  const lower = name.toLowerCase();
  const where: MdxUrlWhere = /^[a-z]/.test(element) ? "html-attribute" : "jsx-attribute";
  const push = (url: string, start: number, end: number) =>
    out.push({ url: browserUrl(url), start, end, where, attribute: name, element });

  let mapped: Mapped | null = null;
  if (attr.literal) {
    mapped = decodeReferences(content, attr.chunks);
  } else if (attr.estree) {
    const s = expressionString(attr.estree);
    if (!s) return;
    if (content.slice(s.start, s.end) === s.value) {
      const from = Array.from({ length: s.value.length }, (_, k) => s.start + k);
      mapped = { text: s.value, from, to: from.map((f) => f + 1) };
    } else {
      // Escapes in the literal: the source offsets of its pieces are not kept; report it whole.
      if (
        URL_ATTRIBUTES.has(lower) ||
        SRCSET_ATTRIBUTES.has(lower) ||
        URL_LIST_ATTRIBUTES.has(lower) ||
        LOOKS_LIKE_URL.test(browserUrl(s.value))
      )
        push(s.value, s.start, s.end);
      return;
    }
  }
  if (!mapped || mapped.text.length === 0) return;
  const { text, from, to } = mapped;
  const range = (a: number, b: number) => push(text.slice(a, b), from[a]!, to[b - 1]!);
  if (SRCSET_ATTRIBUTES.has(lower)) {
    for (const [a, b] of srcsetRanges(text)) range(a, b);
  } else if (URL_LIST_ATTRIBUTES.has(lower)) {
    for (const [a, b] of listRanges(text)) range(a, b);
  } else if (URL_ATTRIBUTES.has(lower) || LOOKS_LIKE_URL.test(browserUrl(text))) {
    range(0, text.length);
  }
}

/** An opening JSX tag: its name, source range, enclosing element (index, -1 at the top) and URLs. */
export type MdxElement = {
  name: string;
  start: number;
  end: number;
  parent: number;
  /** Its URL occurrences: `urls.slice(urlsFrom, urlsTo)` of the same scan. */
  urlsFrom: number;
  urlsTo: number;
};

/**
 * Every URL-bearing occurrence in page MDX, found by parsing it with micromark and its MDX extensions
 * (JSX, expressions, ESM): JSX and HTML-element attributes (`src`, `href`, each candidate of
 * `srcset`/`srcSet`, `poster`, … and any other string attribute whose value reads as a URL; a
 * string-literal expression value `src={"…"}` counts as a string), Markdown images and links, and link
 * reference definitions; in source order. Attribute expressions other than a plain string, text and
 * code are not URLs and are not reported. Throws MdxSyntaxError with line and column when the content is
 * not valid MDX. micromark is linear on ordinary content, but some nestings (a long run of `- `, of `*`)
 * cost more than linear time: run it off the event loop with a deadline (see page_scan.ts).
 */
export function scanMdxUrls(content: string): MdxUrl[] {
  return scanMdx(content).urls;
}

/** A JSX tag (opening or closing) as written: its name (`""` for a fragment) and source range. */
export type MdxTag = { name: string; start: number; end: number; closing: boolean };

/**
 * An attribute of a JSX tag: its name and source range, and its value as a string when it is one (a
 * literal, decoded, or a string-literal expression); `expression` for any other `{…}` value, `spread`
 * for `{...props}`, `boolean` for a name alone. `tag` indexes `code.tags`.
 */
export type MdxAttribute = {
  tag: number;
  name: string;
  start: number;
  end: number;
  kind: "string" | "expression" | "spread" | "boolean";
  value: string | null;
};

/** What in MDX is code: ESM blocks, `{…}` expressions (`empty` when only a comment), tags, attributes. */
export type MdxCode = {
  esm: { start: number; end: number }[];
  expressions: { start: number; end: number; empty: boolean }[];
  tags: MdxTag[];
  attributes: MdxAttribute[];
};

/** The string value of an attribute, decoded as JSX reads it, or null for other values. */
function attributeValue(content: string, attr: Attr): string | null {
  if (attr.literal) return decodeReferences(content, attr.chunks).text;
  if (attr.estree) return expressionString(attr.estree)?.value ?? null;
  return null;
}

function isEmptyProgram(estree: unknown): boolean {
  const body = (estree as { body?: unknown[] } | undefined)?.body;
  return Array.isArray(body) && body.length === 0;
}

/** What scanMdx keeps while it walks the parser's events. */
type ScanState = {
  content: string;
  urls: MdxUrl[];
  code: MdxCode;
  elements: MdxElement[];
  /** Indexes in `elements` of the elements still open, innermost last. */
  open: number[];
  /** The tag being read: its name so far, closing or self-closing, where it starts, its first URL. */
  element: string;
  closing: boolean;
  selfClosing: boolean;
  tagStart: number;
  tagUrls: number;
  /** The attribute being read, and where it starts; inLiteral while inside its quoted value. */
  attr: Attr | null;
  attrStart: number;
  inLiteral: boolean;
  /** The Markdown images and links being read, innermost last. */
  link: ("markdown-image" | "markdown-link")[];
};

/** A token begins: a tag, an attribute, an expression, an ESM block, or a Markdown URL (reported at once). */
function enterToken(s: ScanState, token: Token): void {
  const type = token.type;
  const start = token.start.offset;
  const end = token.end.offset;
  switch (type) {
    case "mdxJsxFlowTag":
    case "mdxJsxTextTag":
      s.element = "";
      s.closing = false;
      s.selfClosing = false;
      s.tagStart = start;
      s.tagUrls = s.urls.length;
      break;
    case "mdxJsxFlowTagClosingMarker":
    case "mdxJsxTextTagClosingMarker":
      s.closing = true;
      break;
    case "mdxJsxFlowTagSelfClosingMarker":
    case "mdxJsxTextTagSelfClosingMarker":
      s.selfClosing = true;
      break;
    case "mdxJsxFlowTagNamePrimary":
    case "mdxJsxTextTagNamePrimary":
    case "mdxJsxFlowTagNameMemberMarker":
    case "mdxJsxTextTagNameMemberMarker":
    case "mdxJsxFlowTagNameMember":
    case "mdxJsxTextTagNameMember":
    case "mdxJsxFlowTagNamePrefixMarker":
    case "mdxJsxTextTagNamePrefixMarker":
    case "mdxJsxFlowTagNameLocal":
    case "mdxJsxTextTagNameLocal":
      s.element += s.content.slice(start, end);
      break;
    case "mdxJsxFlowTagAttribute":
    case "mdxJsxTextTagAttribute":
      s.attr = { name: "", chunks: [], literal: false };
      s.attrStart = start;
      break;
    case "mdxJsxFlowTagExpressionAttribute":
    case "mdxJsxTextTagExpressionAttribute":
      s.code.attributes.push({ tag: s.code.tags.length, name: "", start, end, kind: "spread", value: null });
      break;
    case "mdxjsEsm":
      s.code.esm.push({ start, end });
      break;
    case "mdxFlowExpression":
    case "mdxTextExpression":
      s.code.expressions.push({ start, end, empty: isEmptyProgram(token.estree) });
      break;
    case "mdxJsxFlowTagAttributeNamePrimary":
    case "mdxJsxTextTagAttributeNamePrimary":
    case "mdxJsxFlowTagAttributeNamePrefixMarker":
    case "mdxJsxTextTagAttributeNamePrefixMarker":
    case "mdxJsxFlowTagAttributeNameLocal":
    case "mdxJsxTextTagAttributeNameLocal":
      if (s.attr) s.attr.name += s.content.slice(start, end);
      break;
    case "mdxJsxFlowTagAttributeValueLiteral":
    case "mdxJsxTextTagAttributeValueLiteral":
      if (s.attr) s.attr.literal = true;
      s.inLiteral = true;
      break;
    case "lineEnding":
      if (s.inLiteral && s.attr) s.attr.chunks.push({ start, end });
      break;
    case "mdxJsxFlowTagAttributeValueExpression":
    case "mdxJsxTextTagAttributeValueExpression":
      if (s.attr) s.attr.estree = token.estree;
      break;
    case "image":
      s.link.push("markdown-image");
      break;
    case "link":
      s.link.push("markdown-link");
      break;
    case "resourceDestinationString": {
      const raw = s.content.slice(start, end);
      s.urls.push({
        url: browserUrl(decodeString(raw)),
        start,
        end,
        where: s.link[s.link.length - 1] ?? "markdown-link",
      });
      break;
    }
    case "definitionDestinationString": {
      const raw = s.content.slice(start, end);
      s.urls.push({ url: browserUrl(decodeString(raw)), start, end, where: "definition" });
      break;
    }
    default:
      if (s.inLiteral && s.attr && LITERAL_VALUE.test(type)) s.attr.chunks.push({ start, end });
  }
}

/** A token ends: an attribute (its URLs reported), a Markdown image or link, or a tag (an element opened or closed). */
function exitToken(s: ScanState, token: Token): void {
  const type = token.type;
  const end = token.end.offset;
  switch (type) {
    case "mdxJsxFlowTagAttributeValueLiteral":
    case "mdxJsxTextTagAttributeValueLiteral":
      s.inLiteral = false;
      break;
    case "mdxJsxFlowTagAttribute":
    case "mdxJsxTextTagAttribute":
      if (s.attr) {
        attributeUrls(s.content, s.element, s.attr, s.urls);
        const value = attributeValue(s.content, s.attr);
        const kind =
          value !== null
            ? "string"
            : s.attr.literal || s.attr.estree !== undefined
              ? "expression"
              : "boolean";
        s.code.attributes.push({
          tag: s.code.tags.length,
          name: s.attr.name,
          start: s.attrStart,
          end,
          kind,
          value,
        });
      }
      s.attr = null;
      break;
    case "image":
    case "link":
      s.link.pop();
      break;
    case "mdxJsxFlowTag":
    case "mdxJsxTextTag":
      s.code.tags.push({ name: s.element, start: s.tagStart, end, closing: s.closing });
      if (s.closing) {
        // Close up to the innermost open element of that name (MDX itself checks the nesting).
        for (let i = s.open.length - 1; i >= 0; i--) {
          if (s.elements[s.open[i]!]!.name === s.element) {
            s.open.length = i;
            break;
          }
        }
      } else {
        const parent = s.open.length > 0 ? s.open[s.open.length - 1]! : -1;
        s.elements.push({
          name: s.element,
          start: s.tagStart,
          end,
          parent,
          urlsFrom: s.tagUrls,
          urlsTo: s.urls.length,
        });
        if (!s.selfClosing) s.open.push(s.elements.length - 1);
      }
      break;
  }
}

/**
 * scanMdxUrls, plus every opening JSX tag with its enclosing element (closing tags matched by name), and
 * what in the content is code (for sanitizing, see mdx_sanitize.ts).
 */
export function scanMdx(content: string): { urls: MdxUrl[]; elements: MdxElement[]; code: MdxCode } {
  const s: ScanState = {
    content,
    urls: [],
    code: { esm: [], expressions: [], tags: [], attributes: [] },
    elements: [],
    open: [],
    element: "",
    closing: false,
    selfClosing: false,
    tagStart: 0,
    tagUrls: 0,
    attr: null,
    attrStart: 0,
    inLiteral: false,
    link: [],
  };
  for (const [kind, token] of events(content)) {
    if (kind === "enter") enterToken(s, token);
    else exitToken(s, token);
  }
  return { urls: s.urls, elements: s.elements, code: s.code };
}
