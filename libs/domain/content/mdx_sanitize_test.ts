import { describe, expect, test } from "bun:test";
import { applyEdits, isDangerousUrl, sanitizeEdits } from "./mdx_sanitize.ts";
import { scanMdx } from "./mdx_urls.ts";

function sanitize(content: string): string {
  const { urls, code } = scanMdx(content);
  return applyEdits(content, sanitizeEdits(code, urls)).text;
}

describe("sanitizing MDX for readers (decision 0312)", () => {
  test("script-capable elements lose their tags; their text stays text", () => {
    expect(sanitize("Hi <script>alert(1)</script> there")).toBe("Hi alert(1) there");
    // svg and its children are not HTML_ELEMENTS: every tag goes.
    expect(sanitize('<iframe src="https://evil.test" />\n\n<svg onload="x"><circle /></svg>')).toBe("\n\n");
    expect(sanitize("<style>{`body{}`}</style>")).toBe("");
  });

  test("ESM, expressions, spreads and expression attributes go; comments and string expressions stay", () => {
    const content =
      'import x from "y"\nexport const z = 1\n\n# T {1 + 1}\n\n{/* a note */}\n\n<Media src={"/a.png"} alt={x} {...props} />\n';
    expect(sanitize(content)).toBe('\n\n# T \n\n{/* a note */}\n\n<Media src={"/a.png"}   />\n');
  });

  test("event handlers, dangerouslySetInnerHTML, srcdoc", () => {
    expect(sanitize('<a href="/x" onClick="steal()" onmouseover="y">k</a>')).toBe('<a href="/x"  >k</a>');
    expect(sanitize('<Box dangerouslySetInnerHTML="x" srcDoc="y" title="t" />')).toBe('<Box   title="t" />');
  });

  test("script URLs however written: attributes removed, Markdown destinations become #", () => {
    expect(sanitize('<a href="javascript:alert(1)">a</a>')).toBe("<a >a</a>");
    expect(sanitize('<a href="java&#x0A;script&colon;alert(1)">a</a>')).toBe("<a >a</a>");
    expect(sanitize('<Link to=" JavaScript: alert(1)">a</Link>')).toBe("<Link >a</Link>");
    expect(sanitize("[a](javascript:alert(1)) ![b](data:text/html,x)\n\n[c]: vbscript:x\n")).toBe(
      "[a](#) ![b](#)\n\n[c]: #\n",
    );
    expect(sanitize('<img src="data:image/png;base64,AAAA" alt="Data: 2024" />')).toBe(
      '<img src="data:image/png;base64,AAAA" alt="Data: 2024" />',
    );
  });

  test("ordinary content is untouched", () => {
    const content =
      '# Title\n\n<Column fillWidth><Column fillWidth><Media data-visual-block="image" src="/api/media/k.png" alt="x" /></Column></Column>\n\n[home](/) <a href="https://example.com">x</a>\n';
    const { urls, code } = scanMdx(content);
    expect(sanitizeEdits(code, urls)).toEqual([]);
  });

  test("isDangerousUrl: data: only where a URL is expected", () => {
    expect(isDangerousUrl("data:text/html,x")).toBe(true);
    expect(isDangerousUrl("data: numbers", false)).toBe(false);
    expect(isDangerousUrl("javascript:x", false)).toBe(true);
  });

  test("applyEdits maps ranges after the edits and voids ranges inside them", () => {
    const { text, map } = applyEdits("aaXXbbYYcc", [
      { start: 2, end: 4, text: "" },
      { start: 6, end: 8, text: "#" },
    ]);
    expect(text).toBe("aabb#cc");
    expect(map(4, 6)).toEqual([2, 4]);
    expect(map(8, 10)).toEqual([5, 7]);
    expect(map(3, 5)).toBeNull();
    expect(map(0, 2)).toEqual([0, 2]);
  });
});
