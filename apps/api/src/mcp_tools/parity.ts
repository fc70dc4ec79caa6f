/**
 * Why a REST operation has no MCP tool (CONTRACT "Agents over MCP: every job without REST"):
 * - `browser`: a person's step in a browser (approving an OAuth connection, a signed link's page);
 * - `bytes`: file bytes that do not fit a JSON-RPC message (over 5 MB: the signed upload);
 * - `operator`: the operator's own route, not an API key's;
 * - `public`: no API key at all (published sites, the newsletter's signed links, health);
 * - `protocol`: MCP itself;
 * - `gap`: an operation an API key may call that has no tool yet (listed in the README until it has).
 */
export type NoToolReason = "browser" | "bytes" | "operator" | "public" | "protocol" | "gap";

/** One REST operation (OpenAPI operationId): the MCP tool that does it, or why none does. */
export type ParityRow = { tool: string } | { none: NoToolReason; why: string };

const t = (tool: string): ParityRow => ({ tool });
const none = (reason: NoToolReason, why: string): ParityRow => ({ none: reason, why });

const publicRead = none("public", "no API key: a visitor's read of a published site");
const signedLink = none("public", "no API key: the signed link in a newsletter mail is the credential");

/**
 * Every REST operation of the OpenAPI document, by operationId. parity_test.ts fails when the document
 * has an operation missing here (or a row names a tool that does not mirror it), and the README's MCP
 * table is this table (the test compares them).
 */
export const PARITY: Record<string, ParityRow> = {
  // Sites and templates
  getTemplates: t("list_templates"),
  getSites: t("list_sites"),
  postSites: t("create_site"),
  getSitesSiteId: t("get_site"),
  patchSitesSiteId: t("rename_site"),
  deleteSitesSiteId: t("delete_site"),
  postSitesSiteIdPublish: t("publish_site"),
  postSitesSiteIdUnpublish: t("unpublish_site"),
  // Pages
  getSitesSiteIdPages: t("list_pages"),
  postSitesSiteIdPages: t("create_page"),
  getSitesSiteIdPagesPageId: t("get_page"),
  patchSitesSiteIdPagesPageId: t("update_page"),
  deleteSitesSiteIdPagesPageId: t("delete_page"),
  putSitesSiteIdPagesOrder: t("reorder_pages"),
  // Layout, chrome, collections, links
  getSitesSiteIdLayout: t("get_site_layout"),
  putSitesSiteIdLayout: t("update_site_layout"),
  getSitesSiteIdChrome: t("get_chrome_strings"),
  patchSitesSiteIdChrome: t("set_default_locale"),
  putSitesSiteIdChromeLocale: t("set_chrome_strings"),
  getSitesSiteIdCollections: t("list_collections"),
  putSitesSiteIdCollectionsKey: t("define_collection"),
  deleteSitesSiteIdCollectionsKey: t("delete_collection"),
  getSitesSiteIdCollectionsKeyItems: t("list_collection_items"),
  postSitesSiteIdCollectionsKeyItems: t("upsert_collection_items"),
  putSitesSiteIdCollectionsKeyItemsOrder: t("reorder_collection_items"),
  patchSitesSiteIdCollectionsKeyItemsItemId: t("update_collection_item"),
  deleteSitesSiteIdCollectionsKeyItemsItemId: t("delete_collection_item"),
  postSitesSiteIdLinksTranslate: t("translate_links"),
  getSitesSiteIdLinksBroken: t("list_broken_links"),
  // Media library and screenshots
  getSitesSiteIdMedia: t("list_media"),
  postSitesSiteIdMediaUpload: t("upload_media"),
  postSitesSiteIdMediaUploadNameComplete: none(
    "bytes",
    "completes a signed upload of over 5 MB; upload_media takes a file up to 5 MB in one call",
  ),
  postSitesSiteIdMediaImportUrl: t("import_media_from_url"),
  deleteSitesSiteIdMediaMediaId: t("delete_media"),
  getSitesSiteIdMediaScreenshotStyles: t("list_screenshot_styles"),
  postSitesSiteIdMediaScreenshot: t("queue_screenshot"),
  getSitesSiteIdMediaScreenshotRenderId: t("get_screenshot"),
  postSitesSiteIdMediaScreenshotLogin: t("create_screenshot_login_link"),
  getPublicScreenshotStylesStyleIdPreview: none("public", "no API key: a style's preview image"),
  // Newsletters
  getSitesSiteIdSubscribers: t("list_subscribers"),
  getSitesSiteIdSubscribersSubscriberId: t("get_subscriber"),
  postSitesSiteIdSubscribersSubscriberIdReactivate: t("reactivate_subscriber"),
  postSitesSiteIdSubscribers: t("add_subscriber"),
  deleteSitesSiteIdSubscribersSubscriberId: t("delete_subscriber"),
  getSitesSiteIdCampaigns: t("list_campaigns"),
  postSitesSiteIdCampaigns: t("create_campaign"),
  getSitesSiteIdCampaignsCampaignId: t("get_campaign"),
  patchSitesSiteIdCampaignsCampaignId: t("update_campaign"),
  deleteSitesSiteIdCampaignsCampaignId: t("delete_campaign"),
  getSitesSiteIdCampaignsCampaignIdPreview: none(
    "browser",
    "an HTML page for the dashboard's preview frame; send_test_campaign mails the real thing",
  ),
  postSitesSiteIdCampaignsCampaignIdTest: t("send_test_campaign"),
  postSitesSiteIdCampaignsCampaignIdSend: t("send_campaign"),
  postSitesSiteIdCampaignsCampaignIdResume: t("resume_campaign"),
  postSitesSiteIdCampaignsCampaignIdRevokeMedia: t("revoke_campaign_media"),
  postSitesSiteIdCampaignsCampaignIdCancel: t("cancel_campaign"),
  postPublicSitesSlugSubscribe: none("public", "no API key: a visitor's sign-up form"),
  getPublicNewsletterConfirm: signedLink,
  getPublicNewsletterUnsubscribe: signedLink,
  postPublicNewsletterUnsubscribe: signedLink,
  postNewsletterInbound: none("operator", "the mail server's bounce reports, with the operator's token"),
  postNewsletterInboundSes: none(
    "public",
    "Amazon SNS posts SES notifications here; the message's signature is the credential",
  ),
  // Social
  getSocialAccounts: t("list_social_accounts"),
  postSocialAccounts: t("connect_social_account"),
  postSocialAccountsConnect: t("start_social_connection"),
  postSocialAccountsConnectConfirm: t("confirm_social_connection"),
  getSocialAccountsAccountIdCreatorInfo: t("get_tiktok_creator_info"),
  deleteSocialAccountsAccountId: t("disconnect_social_account"),
  getSocialOauthPlatformCallback: none(
    "browser",
    "the platform sends the user's browser here after approving a connection",
  ),
  getSocialPosts: t("list_social_posts"),
  postSocialPosts: t("create_social_post"),
  getSocialPostsPostId: t("get_social_post"),
  patchSocialPostsPostId: t("update_social_post"),
  postSocialPostsPostIdCancel: t("cancel_social_post"),
  deleteSocialPostsPostId: t("delete_social_post"),
  getSocialPerformance: t("get_social_performance"),
  getSocialMedia: t("list_social_media"),
  postSocialMedia: t("add_social_media"),
  deleteSocialMediaMediaId: t("delete_social_media"),
  postSocialMediaUpload: none("bytes", "a signed upload of the file's bytes (up to 100 MB videos)"),
  postSocialMediaGenerate: t("generate_social_images"),
  postSocialMediaClips: t("create_clip"),
  getSocialMediaClipsClipId: t("get_clip"),
  // Webhooks
  postWebhooks: t("create_webhook"),
  getWebhooks: t("list_webhooks"),
  getWebhooksWebhookId: t("get_webhook"),
  patchWebhooksWebhookId: t("update_webhook"),
  deleteWebhooksWebhookId: t("delete_webhook"),
  postWebhooksWebhookIdRotateSecret: t("rotate_webhook_secret"),
  getWebhooksWebhookIdDeliveries: t("list_webhook_deliveries"),
  postWebhooksWebhookIdDeliveriesDeliveryIdRetry: t("retry_webhook_delivery"),
  postWebhooksWebhookIdRecover: t("recover_webhook_deliveries"),
  // Delivery, public reads, health, MCP
  getApiMediaKey: none("public", "file delivery behind grants, share tokens or a session cookie"),
  headApiMediaKey: none("public", "file delivery behind grants, share tokens or a session cookie"),
  putApiMediaKey: none("bytes", "the signed PUT of a file's bytes (its signature is the credential)"),
  getPublicSitesSlug: publicRead,
  getPublicSitesSlugPages: publicRead,
  getPublicSitesSlugPagesPageId: publicRead,
  getPublicSitesSlugCollectionsKeyItems: publicRead,
  getHealthz: none("public", "the process's health"),
  getReadyz: none("public", "the process's readiness"),
  postMcp: none("protocol", "MCP itself"),
  getMcp: none("protocol", "MCP itself (405 in stateless mode)"),
  deleteMcp: none("protocol", "MCP itself (405 in stateless mode)"),
};

const REASON_WORDS: Record<NoToolReason, string> = {
  browser: "a browser step",
  bytes: "file bytes over 5 MB",
  operator: "operator only",
  public: "no API key",
  protocol: "MCP itself",
  gap: "no tool yet",
};

/**
 * The README's table of the REST operations an API key may call without a tool of their own (public,
 * protocol and health routes left out), generated from PARITY: `| operation | why |`.
 */
export function parityExceptionsMarkdown(paths: Record<string, string>): string {
  const rows = Object.entries(PARITY)
    .filter((e): e is [string, { none: NoToolReason; why: string }] => "none" in e[1])
    .filter(([, r]) => r.none !== "public" && r.none !== "protocol")
    .map(([op, r]) => `| \`${paths[op] ?? op}\` | ${REASON_WORDS[r.none]}: ${r.why} |`);
  return ["| REST operation | why no tool |", "| --- | --- |", ...rows].join("\n");
}
