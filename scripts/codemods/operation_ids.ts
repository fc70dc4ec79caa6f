/**
 * Renames the REST operations' ids from the path-derived ones (`postSitesSiteIdMediaScreenshot`) to
 * readable verbs (`queueScreenshot`; issue 37, decision 1530) in the files that name operations by id:
 * the parity table, the MCP tools, routes, tests and the README. Whole words only, so
 * `getSites` does not touch `getSitesSiteId`; running it twice changes nothing.
 *
 *   bun scripts/codemods/operation_ids.ts            # rewrite the files below (and any given as arguments)
 *   bun scripts/codemods/operation_ids.ts --check    # exit 1, listing them, where an old id remains
 *
 * After merging a branch that still names old ids, run it again: the map is the one list of renames.
 */
import { Glob } from "bun";

/** Old id (derived from method and path) → new id (what the route's `operation:` declares). */
export const OPERATION_IDS: Record<string, string> = {
  // Sites and templates
  getTemplates: "listTemplates",
  getSites: "listSites",
  postSites: "createSite",
  getSitesSiteId: "getSite",
  patchSitesSiteId: "renameSite",
  deleteSitesSiteId: "deleteSite",
  postSitesSiteIdPublish: "publishSite",
  postSitesSiteIdUnpublish: "unpublishSite",
  // Pages
  getSitesSiteIdPages: "listPages",
  postSitesSiteIdPages: "createPage",
  getSitesSiteIdPagesPageId: "getPage",
  patchSitesSiteIdPagesPageId: "updatePage",
  deleteSitesSiteIdPagesPageId: "deletePage",
  putSitesSiteIdPagesOrder: "reorderPages",
  // Layout, chrome, collections, links
  getSitesSiteIdLayout: "getSiteLayout",
  putSitesSiteIdLayout: "replaceSiteLayout",
  getSitesSiteIdChrome: "getChromeStrings",
  patchSitesSiteIdChrome: "setDefaultChromeLocale",
  putSitesSiteIdChromeLocale: "setChromeStrings",
  getSitesSiteIdCollections: "listCollections",
  putSitesSiteIdCollectionsKey: "defineCollection",
  deleteSitesSiteIdCollectionsKey: "deleteCollection",
  getSitesSiteIdCollectionsKeyItems: "listCollectionItems",
  postSitesSiteIdCollectionsKeyItems: "addCollectionItem",
  putSitesSiteIdCollectionsKeyItemsOrder: "reorderCollectionItems",
  patchSitesSiteIdCollectionsKeyItemsItemId: "updateCollectionItem",
  deleteSitesSiteIdCollectionsKeyItemsItemId: "deleteCollectionItem",
  postSitesSiteIdLinksTranslate: "translateLinks",
  getSitesSiteIdLinksBroken: "listBrokenLinks",
  // Media library and screenshots
  getSitesSiteIdMedia: "listMedia",
  postSitesSiteIdMediaUpload: "prepareMediaUpload",
  postSitesSiteIdMediaUploadNameComplete: "completeMediaUpload",
  postSitesSiteIdMediaImportUrl: "importMediaFromUrl",
  deleteSitesSiteIdMediaMediaId: "deleteMedia",
  getSitesSiteIdMediaScreenshotStyles: "listScreenshotStyles",
  postSitesSiteIdMediaScreenshot: "queueScreenshot",
  getSitesSiteIdMediaScreenshotRenderId: "getScreenshot",
  postSitesSiteIdMediaScreenshotLogin: "createScreenshotLoginLink",
  getPublicScreenshotStylesStyleIdPreview: "getScreenshotStylePreview",
  // Newsletters
  getSitesSiteIdSubscribers: "listSubscribers",
  postSitesSiteIdSubscribers: "addSubscribers",
  getSitesSiteIdSubscribersSubscriberId: "getSubscriber",
  deleteSitesSiteIdSubscribersSubscriberId: "deleteSubscriber",
  postSitesSiteIdSubscribersSubscriberIdReactivate: "reactivateSubscriber",
  getSitesSiteIdCampaigns: "listCampaigns",
  postSitesSiteIdCampaigns: "createCampaign",
  getSitesSiteIdCampaignsCampaignId: "getCampaign",
  patchSitesSiteIdCampaignsCampaignId: "updateCampaign",
  deleteSitesSiteIdCampaignsCampaignId: "deleteCampaign",
  getSitesSiteIdCampaignsCampaignIdPreview: "previewCampaign",
  postSitesSiteIdCampaignsCampaignIdTest: "sendTestCampaign",
  postSitesSiteIdCampaignsCampaignIdSend: "sendCampaign",
  postSitesSiteIdCampaignsCampaignIdResume: "resumeCampaign",
  postSitesSiteIdCampaignsCampaignIdRevokeMedia: "revokeCampaignMedia",
  postSitesSiteIdCampaignsCampaignIdCancel: "cancelCampaign",
  postPublicSitesSlugSubscribe: "subscribeToNewsletter",
  getPublicNewsletterConfirm: "confirmSubscription",
  getPublicNewsletterUnsubscribe: "getUnsubscribePage",
  postPublicNewsletterUnsubscribe: "unsubscribe",
  postNewsletterInbound: "receiveInboundReport",
  postNewsletterInboundSes: "receiveSesNotification",
  // Social
  getSocialAccounts: "listSocialAccounts",
  postSocialAccounts: "connectSocialAccount",
  postSocialAccountsConnect: "startSocialConnection",
  postSocialAccountsConnectConfirm: "confirmSocialConnection",
  getSocialAccountsAccountIdCreatorInfo: "getSocialCreatorInfo",
  deleteSocialAccountsAccountId: "disconnectSocialAccount",
  getSocialOauthPlatformCallback: "completeSocialOAuth",
  getSocialPosts: "listSocialPosts",
  postSocialPosts: "createSocialPost",
  getSocialPostsPostId: "getSocialPost",
  patchSocialPostsPostId: "updateSocialPost",
  postSocialPostsPostIdCancel: "cancelSocialPost",
  deleteSocialPostsPostId: "deleteSocialPost",
  getSocialPerformance: "getSocialPerformance",
  getSocialMedia: "listSocialMedia",
  postSocialMedia: "addSocialMedia",
  deleteSocialMediaMediaId: "deleteSocialMedia",
  postSocialMediaUpload: "prepareSocialMediaUpload",
  postSocialMediaGenerate: "generateSocialImages",
  postSocialMediaClips: "queueClip",
  getSocialMediaClipsClipId: "getClip",
  // Webhooks
  postWebhooks: "createWebhook",
  getWebhooks: "listWebhooks",
  getWebhooksWebhookId: "getWebhook",
  patchWebhooksWebhookId: "updateWebhook",
  deleteWebhooksWebhookId: "deleteWebhook",
  postWebhooksWebhookIdRotateSecret: "rotateWebhookSecret",
  getWebhooksWebhookIdDeliveries: "listWebhookDeliveries",
  postWebhooksWebhookIdDeliveriesDeliveryIdRetry: "retryWebhookDelivery",
  postWebhooksWebhookIdRecover: "recoverWebhookDeliveries",
  // Delivery, public reads, health, MCP
  getApiMediaKey: "getMediaFile",
  headApiMediaKey: "headMediaFile",
  putApiMediaKey: "receiveSignedUpload",
  getPublicSitesSlug: "getPublicSite",
  getPublicSitesSlugPages: "listPublicPages",
  getPublicSitesSlugPagesPageId: "getPublicPage",
  getPublicSitesSlugCollectionsKeyItems: "listPublicCollectionItems",
  getHealthz: "getHealth",
  getReadyz: "getReadiness",
  postMcp: "sendMcpMessage",
  getMcp: "openMcpStream",
  deleteMcp: "endMcpSession",
};

/** The files that name operations by id (globs from the repository root). */
export const FILES = [
  "apps/api/src/mcp_tools/*.ts",
  "apps/api/src/mcp_site_tools.ts",
  "apps/api/src/mcp*_test.ts",
  "apps/api/src/openapi*_test.ts",
  "apps/api/src/named_models_test.ts",
  "apps/api/src/scope_refusals_test.ts",
  "apps/api/src/auth_test.ts",
  "apps/api/src/routes/*.ts",
  "apps/api/testing/*.ts",
  "scripts/checks/*.ts",
  "README.md",
  "docs/**/*.md",
];

const pattern = new RegExp(`\\b(${Object.keys(OPERATION_IDS).join("|")})\\b`, "g");

/** `text` with every old id, as a whole word, replaced by its new one. */
export function renameOperationIds(text: string): string {
  return text.replace(pattern, (old) => OPERATION_IDS[old] ?? old);
}

/** Decision records keep the ids they were written with (1530 names old ones on purpose). */
const KEEP = /^docs\/decisions\//;

/** The files the codemod reads (repository-relative), and `extra`. */
export async function files(root: string, extra: string[] = []): Promise<string[]> {
  const found = new Set(extra);
  for (const glob of FILES)
    for await (const path of new Glob(glob).scan({ cwd: root })) if (!KEEP.test(path)) found.add(path);
  return [...found].sort();
}

if (import.meta.main) {
  const root = new URL("../..", import.meta.url).pathname;
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const stale: string[] = [];
  for (const path of await files(
    root,
    args.filter((a) => a !== "--check"),
  )) {
    const file = Bun.file(`${root}/${path}`);
    const before = await file.text();
    const after = renameOperationIds(before);
    if (after === before) continue;
    stale.push(path);
    if (!check) await Bun.write(file, after);
  }
  console.log(
    check
      ? `old operation ids in: ${stale.join(", ") || "none"}`
      : `rewrote: ${stale.join(", ") || "nothing"}`,
  );
  if (check && stale.length > 0) process.exit(1);
}
