import { type Static, Type } from "@sinclair/typebox";
import { named, pageOf } from "@site/domain/core";

// One model per shape: the API route, the MCP tool and the TypeScript type all read these.

/** The body of POST /api/v1/sites (and the create_site tool). Name and slug rules are checked by createSite. */
export const CreateSiteBody = Type.Object({
  name: Type.String({ description: "human-readable site name, at most 100 characters" }),
  slug: Type.String({
    description:
      "preview subdomain (<slug>.preview domain): 1-63 lowercase letters, digits and hyphens, no leading or trailing hyphen; unique",
  }),
  template: Type.Optional(
    Type.String({
      description:
        "slug of a marketplace template from GET /api/v1/templates (list_templates); omit for a blank site",
    }),
  ),
});
/** A site creation request that passed its model. */
export type CreateSiteBody = Static<typeof CreateSiteBody>;

/** A site as the API answers it. */
export const SiteView = named(
  "Site",
  Type.Object({
    id: Type.String({ format: "uuid" }),
    name: Type.String(),
    slug: Type.String(),
    public_content_live: Type.Boolean(),
    updated_at: Type.String({
      description: "timestamp with microseconds and UTC offset",
      examples: ["2026-11-22T18:30:00.123456+00:00"],
    }),
  }),
);
/** A site as the API answers it. */
export type SiteView = Static<typeof SiteView>;

/** One site: the answer of creating, reading, renaming, publishing or unpublishing it (and create_site). */
export const SiteAnswer = named("SiteAnswer", Type.Object({ site: SiteView }));

/** The publish_site and unpublish_site tools' answer: REST's SiteAnswer, and where visitors read it. */
export const PublishAnswer = named(
  "PublishAnswer",
  Type.Intersect(
    [
      SiteAnswer,
      Type.Object({
        publicPages: Type.Optional(
          Type.String({
            description: "when the site is live: the public pages' URL (GET, no token); absent otherwise",
          }),
        ),
      }),
    ],
    {
      description: "the site as publishing or unpublishing answers it, with its public pages' URL when live",
    },
  ),
);

/** A marketplace template as the gallery lists it. */
export const TemplateView = named(
  "Template",
  Type.Object({
    slug: Type.String({ description: "pass as `template` to create a site" }),
    name: Type.String(),
    description: Type.String(),
  }),
);

/** The template gallery (GET /api/v1/templates, list_templates): approved templates only. */
export const TemplateList = named("TemplateList", Type.Object({ templates: Type.Array(TemplateView) }));

/** A page of the organization's sites (GET /api/v1/sites, list_sites). */
export const SitePage = named("SitePage", pageOf("sites", SiteView));

const PagePath = Type.String({ maxLength: 200, description: "/ or /segment/…", examples: ["/about"] });
const PageTitle = Type.String({ maxLength: 200 });

/** The body of POST …/pages. */
/**
 * The largest page: 512 KiB of MDX (UTF-8 bytes). Beyond it a write answers 400 VALIDATION_ERROR (the
 * error taxonomy has no 413; the spec answers sizes over a cap with VALIDATION_ERROR). See
 * docs/decisions/0310-page-content-parsed-off-the-event-loop.md.
 */
export const MAX_PAGE_BYTES = 512 * 1024;

export const CreatePageBody = Type.Object({
  path: PagePath,
  title: PageTitle,
  content: Type.String({
    maxLength: MAX_PAGE_BYTES,
    description: `MDX, at most ${MAX_PAGE_BYTES} bytes (512 KiB) of UTF-8; parsed, so it must be valid MDX; images as Column > Column > Media with src = a library \`url\``,
  }),
  position: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "positions are unique per site: default after the last page; a taken one moves the pages from there down (PATCH: move the page there)",
    }),
  ),
});
/** A page creation request that passed its model. */
export type CreatePageBody = Static<typeof CreatePageBody>;

/** The body of PATCH …/pages/:pageId: any of the page's fields. */
export const UpdatePageBody = Type.Partial(CreatePageBody);
/** A page update that passed its model. */
export type UpdatePageBody = Static<typeof UpdatePageBody>;

/** A page as the API answers it. */
export const PageView = Type.Object({
  id: Type.String({ format: "uuid" }),
  path: Type.String(),
  title: Type.String(),
  content: Type.String({
    description:
      "MDX as stored (the value to edit and send back), links to the site's pages read as their current paths; images as Column > Column > Media with src = a library `url`",
  }),
  displayContent: Type.String({
    description:
      "The MDX as readers get it (sanitized: no scripts, expressions or script URLs) with each media reference of this site signed with a short-lived member grant (as the media list's displayUrl): for showing now, never to persist",
  }),
  unsignedMedia: Type.Array(
    Type.Object({ ref: Type.String(), line: Type.Integer(), reason: Type.String() }),
    {
      description: "media references left unsigned in displayContent (not files of this site), and why",
    },
  ),
  displayNotes: Type.Array(Type.String(), {
    description:
      "what readers do not get: constructs removed (script-capable elements, expressions, ESM, event handlers, script URLs), or the whole content when it does not parse",
  }),
  position: Type.Integer(),
  updatedAt: Type.String(),
});
/** A page as the API answers it. */
export type PageView = Static<typeof PageView>;

/** A page written (created or updated) and the warnings of its content (create_page, update_page too). */
export const PageWrite = named(
  "PageWrite",
  Type.Object({ page: PageView, warnings: Type.Array(Type.String()) }),
);

/** A site's pages in position order (GET …/pages, PUT …/pages/order, list_pages, reorder_pages). */
export const PageList = named("PageList", Type.Object({ pages: Type.Array(PageView) }));

/** One page (GET …/pages/<pageId>, get_page). */
export const PageAnswer = named("PageAnswer", Type.Object({ page: PageView }));

/** The delete_page tool's answer (REST answers 204 with no body). */
export const PageDeleted = named(
  "PageDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    pageId: Type.String({ format: "uuid", description: "the page that is gone" }),
  }),
);

/** The body of PATCH /api/v1/sites/<id>. */
export const RenameSiteBody = Type.Object(
  { name: Type.Optional(Type.String({ description: "human-readable site name, at most 100 characters" })) },
  { additionalProperties: false },
);
/** The delete_site tool's answer (REST answers 204 with no body). */
export const SiteDeleted = named(
  "SiteDeleted",
  Type.Object({
    deleted: Type.Literal(true),
    siteId: Type.String({
      format: "uuid",
      description: "the site that is gone (its slug freed after the grace)",
    }),
  }),
);
