import type { Scope } from "@site/domain/core";

/**
 * The scope of each REST operation an MCP tool mirrors, by the operation's OpenAPI operationId: the one
 * place both read it. The route declares `operation: "<name>"` (auth.ts's macro checks the table's
 * scope and writes it to the OpenAPI document as `x-required-scope`), and the tool names the same
 * operation (mcp_tools/tool.ts takes its scope from here), so a tool can never need less than its route
 * (decision 0750). Routes no tool mirrors keep their own `scope:`.
 */
export const OPERATION_SCOPES = {
  // Sites and templates
  getTemplates: "sites:write",
  // Listing the organization's sites is reading (decision 0750): one site reads with any key, and the
  // id is what every content tool takes.
  getSites: "content:read",
  postSites: "sites:write",
  postSitesSiteIdPublish: "sites:write",
  postSitesSiteIdUnpublish: "sites:write",
  // Pages
  getSitesSiteIdPages: "content:read",
  postSitesSiteIdPages: "content:write",
  patchSitesSiteIdPagesPageId: "content:write",
  deleteSitesSiteIdPagesPageId: "content:write",
  putSitesSiteIdPagesOrder: "content:write",
  postSitesSiteIdLinksTranslate: "content:read",
  // Media library
  getSitesSiteIdMedia: "content:read",
  postSitesSiteIdMediaUpload: "content:write",
  postSitesSiteIdMediaImportUrl: "content:write",
  deleteSitesSiteIdMediaMediaId: "content:write",
  // Screenshots: the specification puts styles and the render poll on content:write.
  getSitesSiteIdMediaScreenshotStyles: "content:write",
  postSitesSiteIdMediaScreenshot: "content:write",
  getSitesSiteIdMediaScreenshotRenderId: "content:write",
  postSitesSiteIdMediaScreenshotLogin: "content:write",
  // Layout, chrome strings, collections
  getSitesSiteIdLayout: "content:read",
  putSitesSiteIdLayout: "content:write",
  getSitesSiteIdChrome: "content:read",
  putSitesSiteIdChromeLocale: "content:write",
  putSitesSiteIdCollectionsKey: "content:write",
  getSitesSiteIdCollectionsKeyItems: "content:read",
  postSitesSiteIdCollectionsKeyItems: "content:write",
  // Newsletters
  getSitesSiteIdSubscribers: "content:read",
  postSitesSiteIdSubscribers: "content:write",
  getSitesSiteIdCampaigns: "content:read",
  postSitesSiteIdCampaigns: "content:write",
  postSitesSiteIdCampaignsCampaignIdTest: "content:write",
  postSitesSiteIdCampaignsCampaignIdSend: "content:write",
  // Social
  getSocialMedia: "social:write",
  postSocialMediaClips: "social:write",
  getSocialMediaClipsClipId: "social:write",
  getSocialPosts: "social:write",
  postSocialPosts: "social:write",
  getSocialPostsPostId: "social:write",
  patchSocialPostsPostId: "social:write",
  postSocialPostsPostIdCancel: "social:write",
} as const satisfies Record<string, Scope>;

/** An operation of OPERATION_SCOPES: the OpenAPI operationId of a route an MCP tool mirrors. */
export type OperationName = keyof typeof OPERATION_SCOPES;

/** The scope operation `name` needs, over REST and MCP alike. */
export function scopeOf(name: OperationName): Scope {
  return OPERATION_SCOPES[name];
}
