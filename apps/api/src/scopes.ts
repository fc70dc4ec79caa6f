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
  // One site reads with any key of the organization (decision 0750): no scope, for REST and MCP alike.
  getSitesSiteId: null,
  patchSitesSiteId: "sites:write",
  deleteSitesSiteId: "sites:write",
  postSites: "sites:write",
  postSitesSiteIdPublish: "sites:write",
  postSitesSiteIdUnpublish: "sites:write",
  // Pages
  getSitesSiteIdPages: "content:read",
  postSitesSiteIdPages: "content:write",
  patchSitesSiteIdPagesPageId: "content:write",
  deleteSitesSiteIdPagesPageId: "content:write",
  putSitesSiteIdPagesOrder: "content:write",
  getSitesSiteIdPagesPageId: "content:read",
  postSitesSiteIdLinksTranslate: "content:read",
  getSitesSiteIdLinksBroken: "content:read",
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
  patchSitesSiteIdChrome: "content:write",
  getSitesSiteIdCollections: "content:read",
  deleteSitesSiteIdCollectionsKey: "content:write",
  putSitesSiteIdCollectionsKey: "content:write",
  getSitesSiteIdCollectionsKeyItems: "content:read",
  postSitesSiteIdCollectionsKeyItems: "content:write",
  putSitesSiteIdCollectionsKeyItemsOrder: "content:write",
  patchSitesSiteIdCollectionsKeyItemsItemId: "content:write",
  deleteSitesSiteIdCollectionsKeyItemsItemId: "content:write",
  // Newsletters
  getSitesSiteIdSubscribers: "content:read",
  postSitesSiteIdSubscribers: "content:write",
  getSitesSiteIdSubscribersSubscriberId: "content:read",
  postSitesSiteIdSubscribersSubscriberIdReactivate: "content:write",
  deleteSitesSiteIdSubscribersSubscriberId: "content:write",
  getSitesSiteIdCampaigns: "content:read",
  postSitesSiteIdCampaigns: "content:write",
  postSitesSiteIdCampaignsCampaignIdTest: "content:write",
  postSitesSiteIdCampaignsCampaignIdSend: "content:write",
  getSitesSiteIdCampaignsCampaignId: "content:read",
  postSitesSiteIdCampaignsCampaignIdCancel: "content:write",
  postSitesSiteIdCampaignsCampaignIdResume: "content:write",
  patchSitesSiteIdCampaignsCampaignId: "content:write",
  deleteSitesSiteIdCampaignsCampaignId: "content:write",
  postSitesSiteIdCampaignsCampaignIdRevokeMedia: "content:write",
  // Social
  getSocialMedia: "social:write",
  postSocialMedia: "social:write",
  deleteSocialMediaMediaId: "social:write",
  postSocialMediaGenerate: "social:write",
  postSocialMediaClips: "social:write",
  getSocialMediaClipsClipId: "social:write",
  getSocialPosts: "social:write",
  postSocialPosts: "social:write",
  getSocialPostsPostId: "social:write",
  patchSocialPostsPostId: "social:write",
  postSocialPostsPostIdCancel: "social:write",
  deleteSocialPostsPostId: "social:write",
  getSocialPerformance: "social:write",
  getSocialAccounts: "social:write",
  postSocialAccounts: "social:write",
  postSocialAccountsConnect: "social:write",
  postSocialAccountsConnectConfirm: "social:write",
  deleteSocialAccountsAccountId: "social:write",
  getSocialAccountsAccountIdCreatorInfo: "social:write",
  // Webhooks
  postWebhooks: "webhooks:write",
  getWebhooks: "webhooks:write",
  patchWebhooksWebhookId: "webhooks:write",
  deleteWebhooksWebhookId: "webhooks:write",
  postWebhooksWebhookIdRotateSecret: "webhooks:write",
  getWebhooksWebhookId: "webhooks:write",
  getWebhooksWebhookIdDeliveries: "webhooks:write",
  postWebhooksWebhookIdDeliveriesDeliveryIdRetry: "webhooks:write",
  postWebhooksWebhookIdRecover: "webhooks:write",
} as const satisfies Record<string, Scope | null>;

/** An operation of OPERATION_SCOPES: the OpenAPI operationId of a route an MCP tool mirrors. */
export type OperationName = keyof typeof OPERATION_SCOPES;

/** The scope operation `name` needs, over REST and MCP alike; null: any key of the organization. */
export function scopeOf(name: OperationName): Scope | null {
  return OPERATION_SCOPES[name];
}
