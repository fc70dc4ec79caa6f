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
  listTemplates: t("list_templates"),
  listSites: t("list_sites"),
  createSite: t("create_site"),
  getSite: t("get_site"),
  renameSite: t("rename_site"),
  deleteSite: t("delete_site"),
  publishSite: t("publish_site"),
  unpublishSite: t("unpublish_site"),
  // Pages
  listPages: t("list_pages"),
  createPage: t("create_page"),
  getPage: t("get_page"),
  updatePage: t("update_page"),
  deletePage: t("delete_page"),
  reorderPages: t("reorder_pages"),
  // Layout, chrome, collections, links
  getSiteLayout: t("get_site_layout"),
  replaceSiteLayout: t("update_site_layout"),
  getChromeStrings: t("get_chrome_strings"),
  setDefaultChromeLocale: t("set_default_locale"),
  setChromeStrings: t("set_chrome_strings"),
  listCollections: t("list_collections"),
  defineCollection: t("define_collection"),
  deleteCollection: t("delete_collection"),
  listCollectionItems: t("list_collection_items"),
  addCollectionItem: t("upsert_collection_items"),
  reorderCollectionItems: t("reorder_collection_items"),
  updateCollectionItem: t("update_collection_item"),
  deleteCollectionItem: t("delete_collection_item"),
  translateLinks: t("translate_links"),
  listBrokenLinks: t("list_broken_links"),
  // Media library and screenshots
  listMedia: t("list_media"),
  prepareMediaUpload: t("upload_media"),
  completeMediaUpload: none(
    "bytes",
    "completes a signed upload of over 5 MB; upload_media takes a file up to 5 MB in one call",
  ),
  importMediaFromUrl: t("import_media_from_url"),
  deleteMedia: t("delete_media"),
  listScreenshotStyles: t("list_screenshot_styles"),
  queueScreenshot: t("queue_screenshot"),
  getScreenshot: t("get_screenshot"),
  createScreenshotLoginLink: t("create_screenshot_login_link"),
  getScreenshotStylePreview: none("public", "no API key: a style's preview image"),
  // Newsletters
  listSubscribers: t("list_subscribers"),
  getSubscriber: t("get_subscriber"),
  reactivateSubscriber: t("reactivate_subscriber"),
  addSubscribers: t("add_subscriber"),
  deleteSubscriber: t("delete_subscriber"),
  listCampaigns: t("list_campaigns"),
  createCampaign: t("create_campaign"),
  getCampaign: t("get_campaign"),
  updateCampaign: t("update_campaign"),
  deleteCampaign: t("delete_campaign"),
  previewCampaign: none(
    "browser",
    "an HTML page for the dashboard's preview frame; send_test_campaign mails the real thing",
  ),
  sendTestCampaign: t("send_test_campaign"),
  sendCampaign: t("send_campaign"),
  resumeCampaign: t("resume_campaign"),
  revokeCampaignMedia: t("revoke_campaign_media"),
  cancelCampaign: t("cancel_campaign"),
  subscribeToNewsletter: none("public", "no API key: a visitor's sign-up form"),
  confirmSubscription: signedLink,
  getUnsubscribePage: signedLink,
  unsubscribe: signedLink,
  receiveInboundReport: none("operator", "the mail server's bounce reports, with the operator's token"),
  receiveSesNotification: none(
    "public",
    "Amazon SNS posts SES notifications here; the message's signature is the credential",
  ),
  // Social
  listSocialAccounts: t("list_social_accounts"),
  connectSocialAccount: t("connect_social_account"),
  startSocialConnection: t("start_social_connection"),
  confirmSocialConnection: t("confirm_social_connection"),
  getSocialCreatorInfo: t("get_tiktok_creator_info"),
  disconnectSocialAccount: t("disconnect_social_account"),
  completeSocialOAuth: none(
    "browser",
    "the platform sends the user's browser here after approving a connection",
  ),
  listSocialPosts: t("list_social_posts"),
  createSocialPost: t("create_social_post"),
  getSocialPost: t("get_social_post"),
  updateSocialPost: t("update_social_post"),
  cancelSocialPost: t("cancel_social_post"),
  deleteSocialPost: t("delete_social_post"),
  getSocialPerformance: t("get_social_performance"),
  listSocialMedia: t("list_social_media"),
  addSocialMedia: t("add_social_media"),
  deleteSocialMedia: t("delete_social_media"),
  prepareSocialMediaUpload: none("bytes", "a signed upload of the file's bytes (up to 100 MB videos)"),
  generateSocialImages: t("generate_social_images"),
  queueClip: t("create_clip"),
  getClip: t("get_clip"),
  // Webhooks
  createWebhook: t("create_webhook"),
  listWebhooks: t("list_webhooks"),
  getWebhook: t("get_webhook"),
  updateWebhook: t("update_webhook"),
  deleteWebhook: t("delete_webhook"),
  rotateWebhookSecret: t("rotate_webhook_secret"),
  listWebhookDeliveries: t("list_webhook_deliveries"),
  retryWebhookDelivery: t("retry_webhook_delivery"),
  recoverWebhookDeliveries: t("recover_webhook_deliveries"),
  // Delivery, public reads, health, MCP
  getMediaFile: none("public", "file delivery behind grants, share tokens or a session cookie"),
  headMediaFile: none("public", "file delivery behind grants, share tokens or a session cookie"),
  receiveSignedUpload: none("bytes", "the signed PUT of a file's bytes (its signature is the credential)"),
  getPublicSite: publicRead,
  listPublicPages: publicRead,
  getPublicPage: publicRead,
  listPublicCollectionItems: publicRead,
  getHealth: none("public", "the process's health"),
  getReadiness: none("public", "the process's readiness"),
  sendMcpMessage: none("protocol", "MCP itself"),
  openMcpStream: none("protocol", "MCP itself (405 in stateless mode)"),
  endMcpSession: none("protocol", "MCP itself (405 in stateless mode)"),
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
