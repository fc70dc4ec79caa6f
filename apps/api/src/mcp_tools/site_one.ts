import { Type } from "@sinclair/typebox";
import {
  deleteSite,
  getOwnSite,
  RenameSiteBody,
  renameSite,
  SiteAnswer,
  SiteDeleted,
} from "@site/domain/sites";
import { SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** One site: read, rename, delete; the same models and domain functions as routes/sites.ts. */
export const SITE_ONE_TOOLS: Tool[] = [
  tool({
    name: "get_site",
    title: "Read one site",
    description:
      "One site of your organization: name, slug, whether its pages are public. Any key of the organization may read it. A deleted site is NOT_FOUND.",
    operation: "getSite",
    output: SiteAnswer,
    input: Type.Object({ siteId: SiteId }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const { orgId: _o, clonedFromSiteId: _c, ...site } = await getOwnSite(deps, principal, args.siteId);
      return { value: { site } };
    },
  }),
  tool({
    name: "rename_site",
    title: "Rename a site",
    description:
      "Changes a site's human-readable name (at most 100 characters); the slug stays. Needs sites:write and a key created by an owner or admin.",
    operation: "renameSite",
    output: SiteAnswer,
    input: Type.Object({
      siteId: SiteId,
      name: Type.Optional(Type.String({ ...RenameSiteBody.properties.name, maxLength: 100 })),
    }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const { siteId, ...body } = args;
      return { value: { site: await renameSite(deps, principal, siteId, body) } };
    },
  }),
  tool({
    name: "delete_site",
    title: "Delete a site",
    description:
      "Deletes a site at once: its pages, media and public reads answer NOT_FOUND, and campaigns still to go out are cancelled; the slug stays taken for a grace period, then the site is purged. CONFLICT while a gallery template names it. Needs sites:write and a key created by an owner or admin.",
    operation: "deleteSite",
    output: SiteDeleted,
    input: Type.Object({ siteId: SiteId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await deleteSite(deps, principal, args.siteId);
      return {
        value: { deleted: true, siteId: args.siteId },
        note: `Site ${args.siteId} is deleted; list_sites no longer shows it.`,
      };
    },
  }),
];
