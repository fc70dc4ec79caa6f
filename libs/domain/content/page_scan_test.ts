import { describe, expect, test } from "bun:test";
import { analyzePage, MAX_PAGE_MEDIA_REFS } from "./page_scan.ts";

const bases = {
  publicBaseUrl: "https://api.example.test",
  legacyPrefixes: ["https://bucket.s3.amazonaws.com/"],
};
const own = "site-media/11111111-1111-4111-8111-111111111111/a.png";
const other = "site-media/22222222-2222-4222-8222-222222222222/b.png";

function ok(content: string) {
  const scan = analyzePage(content, bases);
  if (!scan.ok) throw new Error(`not MDX: ${scan.reason}`);
  return scan;
}

describe("analyzePage: media references by parsing", () => {
  test("a path carried in another URL's query is a problem, and a bare copy of it a reference of its own", () => {
    const scan = ok(`<Media src="/api/media/${own}?x=/api/media/${other}" /> ![](/api/media/${other})`);
    expect(scan.problems.map((p) => p.message.split(" ")[0])).toEqual(["carries"]);
    expect(scan.refs.map((r) => r.key)).toEqual([other]);
  });

  test("a media path in text, code or an expression is a problem (never signed)", () => {
    const scan = ok(
      `Text /api/media/${own}\n\n\`/api/media/${own}\`\n\n<Media src={"/api/media/" + "${own}"} />\n`,
    );
    expect(scan.refs).toEqual([]);
    expect(scan.problemCount).toBe(3);
    expect(scan.problems.map((p) => p.line)).toEqual([1, 3, 5]);
  });

  test("absolute and legacy URLs name their key; /api/media/ on another host is a problem", () => {
    const scan = ok(
      `![a](https://api.example.test/api/media/${own})\n\n![b](https://bucket.s3.amazonaws.com/${other})\n\n![c](https://evil.test/api/media/${other})\n`,
    );
    expect(scan.refs.map((r) => [r.key, r.line])).toEqual([
      [own, 1],
      [other, 3],
    ]);
    expect(scan.problems.map((p) => p.line)).toEqual([5]);
  });

  test("a displayUrl with a grant and an outside Media src are problems; ordinary links are not", () => {
    const scan = ok(
      `<Media src="/api/media/${own}?k=v.x" />\n\n<Media src="https://img.example.com/a.jpg" />\n\n[home](https://example.com)\n`,
    );
    expect(scan.problems.map((p) => p.message.split(":")[0])).toEqual([
      "a displayUrl with a grant",
      "outside URL",
    ]);
  });

  test("bare Media is listed; Column > Column > Media is not", () => {
    const scan = ok(
      `<Column><Column><Media src="/api/media/${own}" /></Column></Column>\n\n<Column>\n<Media src="/api/media/${own}" />\n</Column>\n`,
    );
    expect(scan.bareMedia).toEqual([{ line: 4, src: `/api/media/${own}` }]);
  });

  test("references beyond the cap are counted, not listed", () => {
    const scan = ok(`![](/api/media/${own}) `.repeat(MAX_PAGE_MEDIA_REFS + 5));
    expect(scan.refs).toHaveLength(MAX_PAGE_MEDIA_REFS);
    expect(scan.refCount).toBe(MAX_PAGE_MEDIA_REFS + 5);
  });

  test("content that is not MDX gives line and column", () => {
    const scan = analyzePage("# T\n\n<img src=/x>\n", bases);
    expect(scan.ok).toBe(false);
    if (!scan.ok) expect([scan.line, scan.column]).toEqual([3, 10]);
  });
});
