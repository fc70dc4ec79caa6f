import { Type } from "@sinclair/typebox";
import {
  CampaignAnswer,
  CampaignDeleted,
  deleteCampaign,
  revokeCampaignMedia,
  UpdateCampaignBody,
  updateCampaign,
} from "@site/domain/newsletters";
import { getOwnSite } from "@site/domain/sites";
import { campaignNextStep } from "./campaigns.ts";
import { Id, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

const CampaignId = Id("a campaign, from list_campaigns or create_campaign");

/** Changing, deleting and revoking a campaign: the same models and domain functions as routes/campaigns.ts. */
export const CAMPAIGN_EDIT_TOOLS: Tool[] = [
  tool({
    name: "update_campaign",
    title: "Change a campaign draft",
    description:
      "Changes any of subject, preheader, fromName and html of a draft, or of a cancelled campaign (which becomes a draft again). Same HTML rules as create_campaign: images must be files of the site's library by their url. A scheduled, sending or sent campaign is a VALIDATION_ERROR. Needs content:write.",
    operation: "updateCampaign",
    output: CampaignAnswer,
    input: Type.Object({ siteId: SiteId, campaignId: CampaignId, ...UpdateCampaignBody.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _s, campaignId, ...body } = args;
      const campaign = await updateCampaign(deps, site, campaignId, body);
      return { value: { campaign }, note: campaignNextStep(campaign) };
    },
  }),
  tool({
    name: "delete_campaign",
    title: "Delete a campaign",
    description:
      "Deletes a campaign that is not sending (then: VALIDATION_ERROR; cancel_campaign or wait with get_campaign); the image links of mails already sent stop working. Needs content:write.",
    operation: "deleteCampaign",
    output: CampaignDeleted,
    input: Type.Object({ siteId: SiteId, campaignId: CampaignId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      await deleteCampaign(deps, site, args.campaignId);
      return {
        value: { deleted: true, campaignId: args.campaignId },
        note: `Campaign ${args.campaignId} is deleted; list_campaigns shows the others.`,
      };
    },
  }),
  tool({
    name: "revoke_campaign_media",
    title: "Revoke the image links of a campaign's mails",
    description:
      "The images in a campaign's mails stay readable for a year by default; after this their links answer 403 (caches may keep an image up to an hour), and mails sent later carry new links. Use it when an image must stop being seen. Needs content:write.",
    operation: "revokeCampaignMedia",
    output: CampaignAnswer,
    input: Type.Object({ siteId: SiteId, campaignId: CampaignId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const campaign = await revokeCampaignMedia(deps, site, args.campaignId);
      return {
        value: { campaign },
        note: "The image links of every mail sent for this campaign are revoked.",
      };
    },
  }),
];
