import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  AppError,
  createSite,
  getOwnSite,
  importFromUrl,
  listLibrary,
  listStyles,
  listTemplates,
  type Principal,
  type Scope,
  styleView,
} from "@site/domain";
import type { AppDeps } from "./deps.ts";

/** A tool of the MCP server: its JSON Schema input is also its validation (TypeBox). */
export type Tool<S extends TSchema = TSchema> = {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  input: S;
  readOnly: boolean;
  run(
    deps: AppDeps,
    principal: Principal,
    args: Static<S>,
  ): Promise<{ value: Record<string, unknown>; note?: string }>;
};

function tool<S extends TSchema>(t: Tool<S>): Tool {
  return t as unknown as Tool;
}

/** The nested Column/Column/Media shape the visual editor recognizes as an image block. */
export function mediaEmbedSnippet(publicUrl: string, alt: string): string {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  return [
    '<Column fillWidth paddingTop="l" paddingBottom="l">',
    "  <Column fillWidth>",
    `    <Media data-visual-block="image" src="${esc(publicUrl)}" alt="${esc(alt)}" aspectRatio="16 / 9" radius="m" />`,
    "  </Column>",
    "</Column>",
  ].join("\n");
}

const siteId = Type.String({
  description: "id (UUID) of a site of your organization, from create_site or GET /api/v1/sites",
});

/** The tools: each calls the same domain function as its HTTP route, so every rule holds here too. */
export const TOOLS: Tool[] = [
  tool({
    name: "list_templates",
    title: "List site templates",
    description:
      "Lists the marketplace templates a new site can be cloned from (approved ones only). Pass a template's `slug` as `template` to create_site. Needs the sites:write scope.",
    scope: "sites:write",
    input: Type.Object({}),
    readOnly: true,
    run: async (deps) => ({ value: { templates: await listTemplates(deps) } }),
  }),
  tool({
    name: "create_site",
    title: "Create a site",
    description:
      "Creates a website in your organization, in coming-soon mode with draft content (public_content_live false). Without `template` it starts with a welcome page and the default layout; with one, the template's pages, layout and styles are copied (large templates may take minutes). Needs sites:write and a key created by an owner or admin. Errors: INVALID_SLUG, RESERVED_SLUG, SLUG_TAKEN, LIMIT_EXCEEDED, TEMPLATE_NOT_FOUND, TEMPLATE_UNAVAILABLE, TEMPLATE_SNAPSHOT_EMPTY.",
    scope: "sites:write",
    input: Type.Object({
      name: Type.String({ description: "human-readable site name, at most 100 characters" }),
      slug: Type.String({
        description:
          "preview subdomain (<slug>.preview domain): 1-63 lowercase letters, digits and hyphens, no leading or trailing hyphen; unique",
      }),
      template: Type.Optional(
        Type.String({ description: "slug of a template from list_templates; omit for a blank site" }),
      ),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await createSite(deps, principal, args);
      return {
        value: { site },
        note: `Created site ${site.slug} (${site.id}). Use this id as siteId in the media tools.`,
      };
    },
  }),
  tool({
    name: "import_media_from_url",
    title: "Import an image from a URL",
    description:
      "Fetches an image from a public HTTPS URL into a site's media library (JPEG, PNG, WebP or GIF, at most 10 MB; SVG and HTML are refused). List the library first (list_media) and import only when no existing file fits. Embed the returned `publicUrl` in page MDX — never an invented URL, never a displayUrl — using the nested Column > Column > Media shape shown in the result, so the visual editor can edit the image. Needs content:write. Errors: VALIDATION_ERROR (bad URL or not an image), BLOCKED_HOST (private or disallowed address), RATE_LIMITED (daily image or failed-fetch limit), TIMEOUT (remote host too slow), FORBIDDEN (storage quota).",
    scope: "content:write",
    input: Type.Object({
      siteId,
      url: Type.String({
        description: "public https:// URL of the image; private, loopback and link-local hosts are refused",
      }),
      alt: Type.Optional(
        Type.String({
          description: "alternative text describing the image, stored with the file and used in the embed",
        }),
      ),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const out = await importFromUrl(
        deps,
        site.id,
        { url: args.url, alt: args.alt ?? null },
        { tls: deps.fetchTls },
      );
      const embed = mediaEmbedSnippet(out.publicUrl, args.alt ?? "");
      return {
        value: { publicUrl: out.publicUrl, path: out.path, name: out.name, embed },
        note: `Imported ${out.name}. Persist publicUrl (${out.publicUrl}) in page content, embedded like this:\n\n${embed}`,
      };
    },
  }),
  tool({
    name: "list_media",
    title: "List a site's media library",
    description:
      "Lists the images in a site's media library, newest first. Call this BEFORE importing and reuse a file when one fits. In page MDX use an image's `url` (the canonical path); `displayUrl` is a short-lived signed preview link that must never be stored in content. Needs content:read.",
    scope: "content:read",
    input: Type.Object({
      siteId,
      cursor: Type.Optional(
        Type.String({ description: "nextCursor from a previous call, for the next page" }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 100, description: "images per page, 1-100, default 50" }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await listLibrary(deps, site.id, { cursor: args.cursor, limit: args.limit ?? 50 }) };
    },
  }),
  tool({
    name: "list_screenshot_styles",
    title: "List screenshot styles",
    description:
      "Lists the 3D device-mockup looks for product screenshots (metadata only). Pass a style's `id` as styleId to POST /api/v1/sites/<siteId>/media/screenshot; without it the default look is used. featured=true narrows to the curated gallery. Needs content:write.",
    scope: "content:write",
    input: Type.Object({
      siteId,
      featured: Type.Optional(
        Type.Boolean({ description: "true: only the curated gallery (recommended for pickers)" }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 100, description: "at most this many styles" }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      await getOwnSite(deps, principal, args.siteId);
      const styles = listStyles({ featured: args.featured, limit: args.limit }).map((s) =>
        styleView(s, deps.config.publicBaseUrl),
      );
      return { value: { styles } };
    },
  }),
];

/** Checks a tool's arguments against its schema: 400-style VALIDATION_ERROR naming each field. */
export function checkToolArgs(t: Tool, args: unknown): unknown {
  const value = args ?? {};
  if (Value.Check(t.input, value)) return value;
  const details = [...Value.Errors(t.input, value)].map((e) => ({
    field: e.path.replace(/^\//, "").replace(/\//g, ".") || "arguments",
    message: e.message,
  }));
  throw new AppError("VALIDATION_ERROR", details.map((d) => `${d.field}: ${d.message}`).join("; "), details);
}
