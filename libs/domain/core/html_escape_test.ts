import { describe, expect, test } from "bun:test";
import { type DefaultTreeAdapterTypes, parseFragment } from "parse5";
import { escapeHtml } from "./html_escape.ts";

type Element = DefaultTreeAdapterTypes.Element;
const HOSTILE = `Tom & "Jerry" <script>alert('x')</script> a='b' c=d > e &amp; &#39;`;

/** The first element of an HTML fragment, as an HTML parser reads it. */
function firstElement(html: string): Element {
  return parseFragment(html).childNodes.find((n): n is Element => "tagName" in n)!;
}

describe("escapeHtml", () => {
  test("each of & < > \" ' becomes its character reference, other text stays", () => {
    expect(escapeHtml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
    expect(escapeHtml("plain text, ünïcode ✓")).toBe("plain text, ünïcode ✓");
    expect(escapeHtml("&amp;")).toBe("&amp;amp;");
  });

  test("a parser reads back the same text, as element text and in double- and single-quoted attributes", () => {
    const e = escapeHtml(HOSTILE);
    expect(e).not.toMatch(/[<>"']/);
    const p = firstElement(`<p>${e}</p>`);
    expect(p.childNodes).toHaveLength(1);
    expect((p.childNodes[0] as DefaultTreeAdapterTypes.TextNode).value).toBe(HOSTILE);
    for (const html of [`<a href="${e}" title="t">x</a>`, `<a href='${e}' title='t'>x</a>`]) {
      const a = firstElement(html);
      expect(a.attrs).toEqual([
        { name: "href", value: HOSTILE },
        { name: "title", value: "t" },
      ]);
    }
  });
});
