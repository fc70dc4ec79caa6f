import { Type } from "@sinclair/typebox";
import { ListQuery, requireSiteManager } from "@site/domain/core";
import {
  CreatePageBody,
  CreateSiteBody,
  createPage,
  createSite,
  getOwnSite,
  getPage,
  listPages,
  listSites,
  listTemplates,
  PAGE_LIMITS,
  PageList,
  PageWrite,
  PublishAnswer,
  SITE_NAME_MAX_LENGTH,
  SiteAnswer,
  SitePage,
  type SiteView,
  SLUG_PATTERN,
  setSitePublished,
  TemplateList,
  UpdatePageBody,
  updatePage,
} from "@site/domain/sites";
import { Cursor, EMBED_RULE, MEDIA_PATH_PATTERN, mediaEmbedSnippet, SiteId, UUID_PATTERN } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

// The pages' models, with the limits a schema can state beside the ones the models carry.
const PagePath = Type.String({
  ...CreatePageBody.properties.path,
  pattern: PAGE_LIMITS.pathPattern,
  description: "/ or /segment[/segment…] of lowercase letters, digits and . _ ~ -; unique in the site",
});
const PageTitle = Type.String({ ...CreatePageBody.properties.title, minLength: 1 });
const PageContent = Type.String({
  ...CreatePageBody.properties.content,
  description: `${CreatePageBody.properties.content.description} ${EMBED_RULE}`,
});
const PageMedia = Type.Array(
  Type.Object(
    {
      url: Type.String({
        pattern: MEDIA_PATH_PATTERN,
        maxLength: 1000,
        description: "the library file's url (/api/media/<key>), as list_media or an import answered it",
      }),
      alt: Type.String({
        maxLength: 1000,
        description: "what the image shows, for people who cannot see it",
      }),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: 50,
    description:
      "images to append to the content, each written as the nested Column > Column > Media block; every url must name a file of this site's library",
  },
);

/** The content with each image appended as the visual editor's image block. */
function withMedia(content: string, media: { url: string; alt: string }[] | undefined): string {
  if (!media?.length) return content;
  const blocks = media.map((m) => mediaEmbedSnippet(m.url, m.alt));
  return [content.trimEnd(), ...blocks].filter(Boolean).join("\n\n");
}

/** Sites, templates and pages. */
export const SITE_TOOLS: Tool[] = [
  tool({
    name: "list_templates",
    title: "List site templates",
    description:
      "Lists the marketplace templates a new site can be cloned from (approved ones only). Pass a template's `slug` as `template` to create_site. Needs the sites:write scope.",
    operation: "listTemplates",
    output: TemplateList,
    input: Type.Object({}),
    readOnly: true,
    run: async (deps) => ({ value: { templates: await listTemplates(deps) } }),
  }),
  tool({
    name: "list_sites",
    title: "List your organization's sites",
    description:
      "Lists the sites of your organization, newest first: id, name, slug and whether public content is live. Start here to find the siteId every other tool takes. Needs content:read.",
    operation: "listSites",
    output: SitePage,
    input: Type.Object({ ...ListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => ({ value: await listSites(deps, principal, args) }),
  }),
  tool({
    name: "create_site",
    title: "Create a site",
    description:
      "Creates a website in your organization, in coming-soon mode with draft content (public_content_live false). Without `template` it starts with a welcome page and the default layout; with one, the template's pages, layout and styles are copied (large templates may take minutes). Needs sites:write and a key created by an owner or admin. Errors: INVALID_SLUG, RESERVED_SLUG, SLUG_TAKEN, LIMIT_EXCEEDED, TEMPLATE_NOT_FOUND, TEMPLATE_UNAVAILABLE, TEMPLATE_SNAPSHOT_EMPTY.",
    operation: "createSite",
    output: SiteAnswer,
    input: Type.Object({
      ...CreateSiteBody.properties,
      name: Type.String({
        ...CreateSiteBody.properties.name,
        minLength: 1,
        maxLength: SITE_NAME_MAX_LENGTH,
      }),
      slug: Type.String({ ...CreateSiteBody.properties.slug, pattern: SLUG_PATTERN, maxLength: 63 }),
      template: Type.Optional(Type.String({ ...CreateSiteBody.properties.template, maxLength: 100 })),
    }),
    readOnly: false,
    run: async (deps, principal, args, work) => {
      const answer = (site: SiteView) => ({
        value: { site },
        note: `Created site ${site.slug} (${site.id}). Use this id as siteId in the page, media and screenshot tools; publish_site makes it public.`,
      });
      return answer(await createSite(deps, principal, args, work?.inWork(answer)));
    },
  }),
  ...(["publish", "unpublish"] as const).map((action) =>
    tool({
      name: `${action}_site`,
      title: action === "publish" ? "Publish a site" : "Unpublish a site",
      description:
        action === "publish"
          ? "Makes a site's pages public (visitors can read them, and their images open with visitor grants). Needs sites:write and a key created by an owner or admin."
          : "Takes a site's pages off the public web; visitor access to its images ends at once. Needs sites:write and a key created by an owner or admin.",
      operation: action === "publish" ? "publishSite" : "unpublishSite",
      output: PublishAnswer,
      input: Type.Object({ siteId: SiteId }),
      readOnly: false,
      run: async (deps, principal, args) => {
        requireSiteManager(principal);
        const own = await getOwnSite(deps, principal, args.siteId);
        const site = await setSitePublished(deps, own, action === "publish");
        const publicPages = `${deps.config.publicBaseUrl}/api/v1/public/sites/${site.slug}/pages`;
        return {
          value: { site, ...(site.public_content_live ? { publicPages } : {}) },
          note: site.public_content_live
            ? `Site ${site.slug} is live; visitors read its pages at ${publicPages}.`
            : `Site ${site.slug} is no longer public.`,
        };
      },
    }),
  ),
  tool({
    name: "list_pages",
    title: "List a site's pages",
    description:
      "Lists the pages of a site in order, each with id, path, title, MDX content and position. Read a page here before update_page. Needs content:read.",
    operation: "listPages",
    output: PageList,
    input: Type.Object({ siteId: SiteId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: { pages: await listPages(deps, site) } };
    },
  }),
  tool({
    name: "create_page",
    title: "Create a page",
    description: `Creates a page of a site from a path, a title and MDX content. ${EMBED_RULE} Pass images in \`media\` and the tool writes those blocks for you (appended after the content). Every media reference is checked against the library: an unknown file, a displayUrl or an outside URL is a VALIDATION_ERROR naming each one, and nothing is stored. Needs content:write.`,
    operation: "createPage",
    output: PageWrite,
    input: Type.Object({
      siteId: SiteId,
      ...CreatePageBody.properties,
      path: PagePath,
      title: PageTitle,
      // Optional here: `media` alone makes a page of images.
      content: Type.Optional(PageContent),
      media: Type.Optional(PageMedia),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const content = withMedia(args.content ?? "", args.media);
      const { siteId: _s, media: _m, ...fields } = args;
      const out = await createPage(deps, site, { ...fields, content });
      return {
        value: out,
        note: `Created page ${out.page.path} (${out.page.id}).${out.warnings.length ? ` Warnings: ${out.warnings.join(" ")}` : ""}`,
      };
    },
  }),
  tool({
    name: "update_page",
    title: "Update a page",
    description: `Changes the given fields of a page (path, title, content, position); \`media\` appends images as blocks to the new content, or to the current content when \`content\` is omitted. ${EMBED_RULE} References are checked as in create_page. Needs content:write.`,
    operation: "updatePage",
    output: PageWrite,
    input: Type.Object({
      siteId: SiteId,
      pageId: Type.String({
        pattern: UUID_PATTERN,
        maxLength: 36,
        description: "id of the page, from list_pages",
      }),
      ...UpdatePageBody.properties,
      path: Type.Optional(PagePath),
      title: Type.Optional(PageTitle),
      content: Type.Optional(PageContent),
      media: Type.Optional(PageMedia),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _s, pageId, media, ...fields } = args;
      let content = fields.content;
      if (media?.length) {
        content = withMedia(content ?? (await getPage(deps, site, pageId)).content, media);
      }
      const out = await updatePage(deps, site, pageId, { ...fields, content });
      return {
        value: out,
        note: `Updated page ${out.page.path}.${out.warnings.length ? ` Warnings: ${out.warnings.join(" ")}` : ""}`,
      };
    },
  }),
];
