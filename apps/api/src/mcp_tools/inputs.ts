import { Type } from "@sinclair/typebox";

/** A UUID, as a pattern (the tool arguments are checked without format plugins). */
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/** The id (UUID) of a resource a tool acts on, said in words an agent can act on. */
export const Id = (what: string) =>
  Type.String({ pattern: UUID_PATTERN, maxLength: 36, description: `id (UUID) of ${what}` });

/** The site a tool acts on. */
export const SiteId = Type.String({
  pattern: UUID_PATTERN,
  maxLength: 36,
  description: "id (UUID) of a site of your organization, from list_sites or create_site",
});

/** An opaque cursor from a previous listing. */
export const Cursor = Type.String({
  maxLength: 500,
  description: "nextCursor from a previous call, for the next page",
});

/** A page size. */
export function Limit(max: number, fallback: number) {
  return Type.Integer({
    minimum: 1,
    maximum: max,
    description: `items per page, 1-${max}, default ${fallback}`,
  });
}

/** A library file's canonical path, the only image source page content may hold. */
export const MEDIA_PATH_PATTERN = "^/api/media/[^?#\\s]+$";

/** The image block of page MDX, declared with the library file's answer (`AddedMediaFile.embed`). */
export { mediaEmbedSnippet } from "@site/domain/media";

/** How page content embeds an image, said once for every tool description that needs it. */
export const EMBED_RULE =
  'Images in page MDX are embedded as <Column fillWidth paddingTop="l" paddingBottom="l"><Column fillWidth><Media data-visual-block="image" src="/api/media/<key>" alt="…" /></Column></Column>, where src is the `url` of a file of this site\'s library (from list_media, import_media_from_url or a done get_screenshot) — never an outside URL, never a displayUrl.';
