import { Type } from "@sinclair/typebox";
import { ListQuery } from "@site/domain/core";
import {
  AddedMediaFile,
  ImportUrlBody,
  importFromUrl,
  listLibrary,
  MediaLibraryPage,
} from "@site/domain/media";
import { getOwnSite } from "@site/domain/sites";
import { Cursor, EMBED_RULE, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** The media library of a site. */
export const MEDIA_TOOLS: Tool[] = [
  tool({
    name: "list_media",
    title: "List a site's media library",
    description:
      "Lists the images in a site's media library, newest first. Call this BEFORE importing and reuse a file when one fits. In page MDX use an image's `url` (the canonical path); `displayUrl` is a short-lived signed preview link that must never be stored in content. Needs content:read.",
    operation: "listMedia",
    input: Type.Object({ siteId: SiteId, ...ListQuery.properties, cursor: Type.Optional(Cursor) }),
    output: MediaLibraryPage,
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _, ...query } = args;
      return { value: await listLibrary(deps, site, query) };
    },
  }),
  tool({
    name: "import_media_from_url",
    title: "Import an image from a URL",
    description: `Fetches an image from a public HTTPS URL into a site's media library (JPEG, PNG, WebP or GIF, at most 10 MB; SVG and HTML are refused). List the library first (list_media) and import only when no existing file fits. ${EMBED_RULE} The result's publicUrl (the same as url) is what a page stores, and embed shows the block for this image. Needs content:write. Errors: VALIDATION_ERROR (bad URL or not an image), BLOCKED_HOST (private or disallowed address), RATE_LIMITED (daily image or failed-fetch limit), TIMEOUT (remote host too slow), FORBIDDEN (storage quota).`,
    operation: "importMediaFromUrl",
    // REST's body model as is: the same URL is refused with the same error (decision 0050).
    input: Type.Object({ siteId: SiteId, ...ImportUrlBody.properties }),
    output: AddedMediaFile,
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args, work) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const answer = (out: AddedMediaFile) => ({
        value: out,
        note: `Imported ${out.name}. Persist publicUrl (${out.publicUrl}) in page content (or pass it in create_page's media), embedded like this:\n\n${out.embed}`,
      });
      return answer(
        await importFromUrl(
          deps,
          site,
          { url: args.url, alt: args.alt ?? null },
          { tls: deps.fetchTls, inWork: work?.inWork(answer) },
        ),
      );
    },
  }),
];
