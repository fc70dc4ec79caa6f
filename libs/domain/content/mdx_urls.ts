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

/**
 * scanMdxUrls, plus every opening JSX tag with its enclosing element (closing tags matched by name), and
 * what in the content is code (for sanitizing, see mdx_sanitize.ts).
 */
export function scanMdx(content: string): { urls: MdxUrl[]; elements: MdxElement[]; code: MdxCode } {
  const evs = events(content);
  const out: MdxUrl[] = [];
  const code: MdxCode = { esm: [], expressions: [], tags: [], attributes: [] };
  let attrStart = 0;
  const elements: MdxElement[] = [];
  const open: number[] = [];
  let element = "";
  let closing = false;
  let selfClosing = false;
  let tagStart = 0;
  let tagUrls = 0;
  let attr: Attr | null = null;
  let inLiteral = false;
  const link: ("markdown-image" | "markdown-link")[] = [];
  for (const [kind, token] of evs) {
    const type = token.type;
    const start = token.start.offset;
    const end = token.end.offset;
    if (kind === "enter") {
      switch (type) {
        case "mdxJsxFlowTag":
        case "mdxJsxTextTag":
          element = "";
          closing = false;
          selfClosing = false;
          tagStart = start;
          tagUrls = out.length;
          break;
        case "mdxJsxFlowTagClosingMarker":
        case "mdxJsxTextTagClosingMarker":
          closing = true;
          break;
        case "mdxJsxFlowTagSelfClosingMarker":
        case "mdxJsxTextTagSelfClosingMarker":
          selfClosing = true;
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
          element += content.slice(start, end);
          break;
        case "mdxJsxFlowTagAttribute":
        case "mdxJsxTextTagAttribute":
          attr = { name: "", chunks: [], literal: false };
          attrStart = start;
          break;
        case "mdxJsxFlowTagExpressionAttribute":
        case "mdxJsxTextTagExpressionAttribute":
          code.attributes.push({ tag: code.tags.length, name: "", start, end, kind: "spread", value: null });
          break;
        case "mdxjsEsm":
          code.esm.push({ start, end });
          break;
        case "mdxFlowExpression":
        case "mdxTextExpression":
          code.expressions.push({ start, end, empty: isEmptyProgram(token.estree) });
          break;
        case "mdxJsxFlowTagAttributeNamePrimary":
        case "mdxJsxTextTagAttributeNamePrimary":
        case "mdxJsxFlowTagAttributeNamePrefixMarker":
        case "mdxJsxTextTagAttributeNamePrefixMarker":
        case "mdxJsxFlowTagAttributeNameLocal":
        case "mdxJsxTextTagAttributeNameLocal":
          if (attr) attr.name += content.slice(start, end);
          break;
        case "mdxJsxFlowTagAttributeValueLiteral":
        case "mdxJsxTextTagAttributeValueLiteral":
          if (attr) attr.literal = true;
          inLiteral = true;
          break;
        case "lineEnding":
          if (inLiteral && attr) attr.chunks.push({ start, end });
          break;
        case "mdxJsxFlowTagAttributeValueExpression":
        case "mdxJsxTextTagAttributeValueExpression":
          if (attr) attr.estree = token.estree;
          break;
        case "image":
          link.push("markdown-image");
          break;
        case "link":
          link.push("markdown-link");
          break;
        case "resourceDestinationString": {
          const raw = content.slice(start, end);
          out.push({
            url: browserUrl(decodeString(raw)),
            start,
            end,
            where: link[link.length - 1] ?? "markdown-link",
          });
          break;
        }
        case "definitionDestinationString": {
          const raw = content.slice(start, end);
          out.push({ url: browserUrl(decodeString(raw)), start, end, where: "definition" });
          break;
        }
        default:
          if (inLiteral && attr && LITERAL_VALUE.test(type)) attr.chunks.push({ start, end });
      }
    } else {
      switch (type) {
        case "mdxJsxFlowTagAttributeValueLiteral":
        case "mdxJsxTextTagAttributeValueLiteral":
          inLiteral = false;
          break;
        case "mdxJsxFlowTagAttribute":
        case "mdxJsxTextTagAttribute":
          if (attr) {
            attributeUrls(content, element, attr, out);
            const value = attributeValue(content, attr);
            const kind =
              value !== null
                ? "string"
                : attr.literal || attr.estree !== undefined
                  ? "expression"
                  : "boolean";
            code.attributes.push({
              tag: code.tags.length,
              name: attr.name,
              start: attrStart,
              end,
              kind,
              value,
            });
          }
          attr = null;
          break;
        case "image":
        case "link":
          link.pop();
          break;
        case "mdxJsxFlowTag":
        case "mdxJsxTextTag":
          code.tags.push({ name: element, start: tagStart, end, closing });
          if (closing) {
            // Close up to the innermost open element of that name (MDX itself checks the nesting).
            for (let i = open.length - 1; i >= 0; i--) {
              if (elements[open[i]!]!.name === element) {
                open.length = i;
                break;
              }
            }
          } else {
            const parent = open.length > 0 ? open[open.length - 1]! : -1;
            elements.push({
              name: element,
              start: tagStart,
              end,
              parent,
              urlsFrom: tagUrls,
              urlsTo: out.length,
            });
            if (!selfClosing) open.push(elements.length - 1);
          }
          break;
      }
    }
  }
  return { urls: out, elements, code };
}
