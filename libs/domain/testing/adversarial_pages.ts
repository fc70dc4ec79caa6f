import { MAX_PAGE_BYTES } from "@site/domain/sites";

/** One adversarial page body and the answer a page write must give it: 400, 201, or either (0). */
export type AdversarialPage = { name: string; content: string; expected: 400 | 201 | 0 };

/**
 * Page bodies that were (or could be) super-linear for a pattern scanner or a Markdown parser (issue 17,
 * item 3), for the page-write test and the page-write bench. `ownUrl` is a media URL of the site written to.
 */
export function adversarialPages(ownUrl: string): AdversarialPage[] {
  const fill = (unit: string, bytes = MAX_PAGE_BYTES - 64) => unit.repeat(Math.floor(bytes / unit.length));
  const rows: [string, string, 400 | 201 | 0][] = [
    ['"<a" x 50,000 (the reported one)', "<a".repeat(50_000), 400],
    ['"<a" x 250,000', "<a".repeat(250_000), 400],
    ["deeply nested lists (- - - …)", "- ".repeat(20_000), 0],
    ["deep emphasis (*** … a … ***)", `${"*".repeat(100_000)}a${"*".repeat(100_000)}`, 0],
    ["deep block quotes (> > > …)", "> ".repeat(200_000), 0],
    ["nested JSX (<A><A>… 40,000 deep)", `${"<A>".repeat(40_000)}${"</A>".repeat(40_000)}`, 0],
    ["a 500 KB attribute list", `<A ${fill('b="x" ', MAX_PAGE_BYTES - 100)}/>`, 0],
    ["20,000 Markdown images", fill(`![](${ownUrl}) `), 400],
    ["unclosed brackets and links", fill("[a]("), 0],
    ["deep expression parentheses", `{${"(".repeat(100_000)}1${")".repeat(100_000)}}`, 400],
    [
      "500 KB of ordinary prose (accepted)",
      fill("Some *prose* with a [link](https://example.com) and `code`.\n\n"),
      201,
    ],
  ];
  return rows.map(([name, content, expected]) => ({ name, content, expected }));
}
