import type { Context } from "./context.ts";

/** What a page write learned about its media references. */
export type PageMediaCheck = { warnings: string[] };

/**
 * Checks the media references of page MDX against the site's library.
 * The media library issue fills this in (real files only, canonical urls, the nested Media shape).
 */
export async function checkPageMedia(
  _ctx: Context,
  _siteId: string,
  _content: string,
): Promise<PageMediaCheck> {
  return { warnings: [] };
}
