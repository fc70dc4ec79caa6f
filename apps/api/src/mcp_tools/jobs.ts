import { Type } from "@sinclair/typebox";
import { AppError } from "@site/domain/core";
import { AddedMediaFile, addedMediaFile, addLibraryFile, MediaDeleted } from "@site/domain/media";
import {
  AddSubscriberBody,
  addSubscriber,
  CampaignAnswer,
  listSubscribers,
  type MailContext,
  type Mailer,
  openMailer,
  SendCampaignBody,
  SubscriberAdded,
  SubscriberListQuery,
  SubscriberPage,
  sendCampaign,
  sendTestCampaign,
  TestCampaignAccepted,
  TestCampaignBody,
} from "@site/domain/newsletters";
import { deletePage, deleteSiteMedia, getOwnSite, PageDeleted } from "@site/domain/sites";
import type { AppDeps } from "../deps.ts";
import { campaignNextStep } from "./campaigns.ts";
import { Cursor, EMBED_RULE, Id, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** The largest file upload_media takes: an agent's small file travels inside one JSON-RPC message. */
export const MCP_UPLOAD_MAX_BYTES = 5 * 1024 * 1024;
const BASE64_MAX = Math.ceil(MCP_UPLOAD_MAX_BYTES / 3) * 4;

const mailers = new WeakMap<object, Mailer>();
/** The app's mailer, or one opened from the configuration as the app opens it (SMTP_URL or the outbox). */
function mailOf(deps: AppDeps): MailContext {
  if (deps.mailer) return deps as MailContext;
  let mailer = mailers.get(deps.config);
  if (!mailer) {
    mailer = openMailer(deps.config, deps.log);
    mailers.set(deps.config, mailer);
  }
  return { ...deps, mailer };
}

/** The jobs an agent could not do before (issue 29): upload a file it holds, delete, newsletters, social. */
export const JOB_TOOLS: Tool[] = [
  tool({
    name: "upload_media",
    title: "Upload a small file you hold into a site's media library",
    description: `Adds an image you hold (base64 in dataBase64, at most ${MCP_UPLOAD_MAX_BYTES / 1024 / 1024} MB decoded; JPEG, PNG, WebP or GIF by their bytes, SVG and HTML refused) to a site's media library, as a signed upload would. For a file on the web use import_media_from_url; for larger files the REST signed upload. ${EMBED_RULE} Needs content:write. Errors: VALIDATION_ERROR (not base64, too large, not an image, over MEDIA_MAX_PIXELS), RATE_LIMITED (daily uploads), FORBIDDEN (storage quota).`,
    operation: "prepareMediaUpload",
    input: Type.Object({
      siteId: SiteId,
      dataBase64: Type.String({
        minLength: 4,
        maxLength: BASE64_MAX,
        pattern: "^[A-Za-z0-9+/]*={0,2}$",
        description: "the file's bytes, standard base64 without line breaks",
      }),
      name: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description: "a file name to start the stored name with",
        }),
      ),
      alt: Type.Optional(Type.String({ maxLength: 500, description: "alternative text" })),
    }),
    output: AddedMediaFile,
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const bytes = new Uint8Array(Buffer.from(args.dataBase64, "base64"));
      if (bytes.byteLength > MCP_UPLOAD_MAX_BYTES)
        throw new AppError("VALIDATION_ERROR", `dataBase64: over ${MCP_UPLOAD_MAX_BYTES} bytes decoded`, [
          { field: "dataBase64", message: `at most ${MCP_UPLOAD_MAX_BYTES} bytes` },
        ]);
      const baseName = args.name?.replace(/\.[A-Za-z0-9]{1,5}$/, "");
      const file = await addLibraryFile(deps, {
        siteId: site.id,
        bytes,
        source: "upload",
        alt: args.alt ?? null,
        baseName,
      });
      const value = addedMediaFile(file, args.alt);
      return {
        value,
        note: `Uploaded ${file.name}. Persist url (${file.url}) in page content, embedded like this:\n\n${value.embed}`,
      };
    },
  }),
  tool({
    name: "delete_media",
    title: "Delete a file of a site's media library",
    description:
      "Deletes a library file by its id (from list_media): it leaves the list, its links stop working and its bytes go back to the storage quota. Refused with CONFLICT while a page, the layout, a collection item, a campaign or a social library entry uses it; error.details.references names each (remove them first). Needs content:write.",
    operation: "deleteMedia",
    output: MediaDeleted,
    input: Type.Object({ siteId: SiteId, mediaId: Id("a library file, from list_media") }),
    readOnly: false,
    run: async (deps, principal, args) => {
      await deleteSiteMedia(deps, principal, args.siteId, args.mediaId);
      return { value: { deleted: true, mediaId: args.mediaId } };
    },
  }),
  tool({
    name: "delete_page",
    title: "Delete a page of a site",
    description:
      "Deletes a page by its id (from list_pages). Links to it elsewhere become broken links (list them with list_broken_links). Needs content:write.",
    operation: "deletePage",
    output: PageDeleted,
    input: Type.Object({ siteId: SiteId, pageId: Id("a page of the site") }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await deletePage(deps, site, args.pageId);
      return { value: { deleted: true, pageId: args.pageId } };
    },
  }),
  tool({
    name: "add_subscriber",
    title: "Add a newsletter subscriber",
    description:
      "Adds one address to a site's newsletter (trimmed and lowercased). A new address is active, or pending with status: pending (a double opt-in mail is sent); one already there keeps its status (an unsubscribe or a bounce stands) and takes the new name. Needs content:write.",
    operation: "addSubscribers",
    output: SubscriberAdded,
    input: Type.Object({ siteId: SiteId, ...AddSubscriberBody.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _s, ...body } = args;
      const { subscriber, created } = await addSubscriber(mailOf(deps), site, body);
      return { value: { subscriber, created } };
    },
  }),
  tool({
    name: "list_subscribers",
    title: "List a site's newsletter subscribers",
    description:
      "Lists the site's subscribers, newest first, optionally by status (active, pending, unsubscribed, bounced). Pass nextCursor back as cursor. Needs content:read.",
    operation: "listSubscribers",
    output: SubscriberPage,
    input: Type.Object({ siteId: SiteId, ...SubscriberListQuery.properties, cursor: Type.Optional(Cursor) }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _s, ...query } = args;
      return { value: await listSubscribers(deps, site, query) };
    },
  }),
  tool({
    name: "send_test_campaign",
    title: "Send a test of a campaign",
    description:
      "Mails a test of a campaign (subject prefixed [Test]) to 1-10 addresses, in the background. Addresses of the organization's members are free; others count against a daily allowance (RATE_LIMITED beyond it, nothing sent). Needs content:write.",
    operation: "sendTestCampaign",
    output: TestCampaignAccepted,
    input: Type.Object({
      siteId: SiteId,
      campaignId: Id("a campaign, from list_campaigns"),
      ...TestCampaignBody.properties,
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await sendTestCampaign(mailOf(deps), site, args.campaignId, args.to);
      return { value: { accepted: true, to: args.to.length } };
    },
  }),
  tool({
    name: "send_campaign",
    title: "Send or schedule a campaign",
    description:
      "Sends a draft campaign now to every active subscriber (each mailed exactly once), or schedules it with a future sendAt (ISO 8601 with offset). Irreversible once sending: review it and send a test first. A site with no active subscriber is refused. Needs content:write.",
    operation: "sendCampaign",
    output: CampaignAnswer,
    input: Type.Object({
      siteId: SiteId,
      campaignId: Id("a campaign, from list_campaigns"),
      sendAt: Type.Optional(Type.String({ ...SendCampaignBody.properties.sendAt, maxLength: 40 })),
    }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const campaign = await sendCampaign(deps, site, args.campaignId, { sendAt: args.sendAt });
      return { value: { campaign }, note: campaignNextStep(campaign) };
    },
  }),
];
