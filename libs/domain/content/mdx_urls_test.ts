import { describe, expect, test } from "bun:test";
import { MdxSyntaxError, type MdxUrl, scanMdxUrls } from "./mdx_urls.ts";

/** Each URL with the source text its range covers. */
function scan(content: string): (MdxUrl & { source: string })[] {
  return scanMdxUrls(content).map((u) => ({ ...u, source: content.slice(u.start, u.end) }));
}

function syntaxErrorOf(content: string): MdxSyntaxError {
  try {
    scanMdxUrls(content);
  } catch (e) {
    if (e instanceof MdxSyntaxError) return e;
    throw e;
  }
  throw new Error("expected an MdxSyntaxError");
}

describe("scanMdxUrls finds every URL by parsing", () => {
  test("a Media src, an HTML img, a Markdown image, a link and a definition, with exact ranges", () => {
    const content = [
      '<Column fillWidth><Column fillWidth><Media data-visual-block="image" src="/api/media/site-media/s/a.png" alt="A" aspectRatio="16 / 9" radius="m" /></Column></Column>',
      "",
      'Text with <img src="/api/media/b.png" alt="b" /> inline, ![c](/api/media/c.png "title") and [a link](https://example.com/d).',
      "",
      "[ref]: /api/media/e.png",
    ].join("\n");
    const urls = scan(content);
    expect(urls.map((u) => [u.url, u.where, u.element, u.attribute])).toEqual([
      ["/api/media/site-media/s/a.png", "jsx-attribute", "Media", "src"],
      ["/api/media/b.png", "html-attribute", "img", "src"],
      ["/api/media/c.png", "markdown-image", undefined, undefined],
      ["https://example.com/d", "markdown-link", undefined, undefined],
      ["/api/media/e.png", "definition", undefined, undefined],
    ]);
    for (const u of urls) expect(u.source).toBe(u.url);
  });

  test("every candidate of srcset / srcSet, with descriptors left out", () => {
    const urls = scan(
      '<img srcSet="/api/media/a.png 1x, /api/media/b.png 2x,/api/media/c.png" src="/x.png" />',
    );
    expect(urls.map((u) => [u.url, u.attribute, u.source])).toEqual([
      ["/api/media/a.png", "srcSet", "/api/media/a.png"],
      ["/api/media/b.png", "srcSet", "/api/media/b.png"],
      ["/api/media/c.png", "srcSet", "/api/media/c.png"],
      ["/x.png", "src", "/x.png"],
    ]);
    expect(
      scan('<picture><source srcset="/a.webp 480w, /b.webp 800w" /></picture>').map((u) => u.url),
    ).toEqual(["/a.webp", "/b.webp"]);
  });

  test("an attribute split over lines (also inside a blockquote) reads as the browser reads it", () => {
    const content =
      '<Media\n  alt="x"\n  src="/api/media/\nsite-media/s/a.png"\n/>\n\n> <img src="/api/\n> media/b.png" />\n';
    const urls = scan(content);
    expect(urls.map((u) => u.url)).toEqual(["/api/media/site-media/s/a.png", "/api/media/b.png"]);
    expect(urls[0]!.source).toBe("/api/media/\nsite-media/s/a.png");
    expect(urls[1]!.source).toBe("/api/\n> media/b.png");
  });

  test("character references and escapes are decoded; the range covers them", () => {
    const urls = scan('<img src="&#x2F;api&#x2F;media&#x2F;a.png" />\n\n![x](/api/media/b\\(1\\).png)\n');
    expect(urls.map((u) => [u.url, u.source])).toEqual([
      ["/api/media/a.png", "&#x2F;api&#x2F;media&#x2F;a.png"],
      ["/api/media/b(1).png", "/api/media/b\\(1\\).png"],
    ]);
  });

  test("a query that carries another path stays part of its URL", () => {
    const urls = scan('<Media src="/api/media/own.png?x=/api/media/other.png" /> /api/media/other.png');
    expect(urls.map((u) => u.url)).toEqual(["/api/media/own.png?x=/api/media/other.png"]);
  });

  test("string expressions count, other expressions and text do not", () => {
    const content =
      '<Media src={"/api/media/a.png"} poster={`/api/media/b.png`} data={x} />\n\n{"/api/media/c.png"}\n\n`/api/media/d.png`\n';
    expect(scan(content).map((u) => [u.url, u.attribute, u.source])).toEqual([
      ["/api/media/a.png", "src", "/api/media/a.png"],
      ["/api/media/b.png", "poster", "/api/media/b.png"],
    ]);
  });

  test("any string attribute that reads as a URL, not ordinary text", () => {
    const urls = scan(
      '<Hero background="/api/media/a.png" link="https://example.com" alt="Note: text" ratio="16 / 9" />',
    );
    expect(urls.map((u) => [u.url, u.attribute])).toEqual([
      ["/api/media/a.png", "background"],
      ["https://example.com", "link"],
    ]);
  });

  test("rewriting each range in place (from the end) keeps the rest of the content", () => {
    const content = '![a](/api/media/a.png)\n\n<img srcset="/api/media/b.png 1x, /api/media/c.png 2x" />\n';
    let out = content;
    for (const u of scan(content).reverse())
      out = `${out.slice(0, u.start)}SIGNED(${u.url})${out.slice(u.end)}`;
    expect(out).toBe(
      '![a](SIGNED(/api/media/a.png))\n\n<img srcset="SIGNED(/api/media/b.png) 1x, SIGNED(/api/media/c.png) 2x" />\n',
    );
  });
});

describe("scanMdxUrls refuses what is not MDX, quickly", () => {
  test("a syntax error carries line and column", () => {
    const e = syntaxErrorOf("# Title\n\nSome text <!-- a comment -->\n");
    expect(e.line).toBe(3);
    expect(e.column).toBeGreaterThan(1);
    expect(e.reason).toContain("comment");
  });

  test('"<a" repeated 50,000 times fails at once', () => {
    const t = performance.now();
    const e = syntaxErrorOf("<a".repeat(50_000));
    expect(e.line).toBe(1);
    expect(performance.now() - t).toBeLessThan(500);
  });

  test("an unclosed expression", () => {
    const e = syntaxErrorOf("text {".concat("(".repeat(10_000)));
    expect(e).toBeInstanceOf(MdxSyntaxError);
  });
});
