import { Type } from "@sinclair/typebox";
import {
  CampaignAnswer,
  type CampaignView,
  cancelCampaign,
  getCampaign,
  resumeCampaign,
} from "@site/domain/newsletters";
import { RENDER_WAIT_MAX_S, waitUntilEnded } from "@site/domain/screenshots";
import { getOwnSite } from "@site/domain/sites";
import { Id, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

const CampaignId = Id("a campaign, from list_campaigns or create_campaign");

/** What an agent does next with a campaign in this state, by tool name. */
export function campaignNextStep(c: CampaignView): string {
  switch (c.status) {
    case "draft":
      return `Draft ${c.id}: send_test_campaign to check it, then send_campaign.`;
    case "scheduled":
      return `Scheduled for ${c.sendAt}; cancel_campaign stops it until sending starts.`;
    case "sending":
      return `Sending (${c.counts?.sent ?? 0} sent so far); call get_campaign again to follow it.`;
    case "paused":
      return `Paused: ${c.error ?? "the mail server refused"}. Once the mail server is fixed, resume_campaign sends to everyone still waiting.`;
    case "cancelled":
      return "Cancelled; it is a draft again once changed, and send_campaign sends it.";
    default:
      return `Campaign is ${c.status}.`;
  }
}

/** A campaign's state and the steps after sending: the same models and domain functions as routes/campaigns.ts. */
export const CAMPAIGN_TOOLS: Tool[] = [
  tool({
    name: "get_campaign",
    title: "Read a newsletter campaign",
    description:
      "One campaign: subject, HTML, status (draft, scheduled, sending, paused, sent, cancelled), sendAt, the mail server's error when paused, and delivery counts (queued, sent, failed, bounced). waitSeconds (0–25, default 0) waits on the server while it is sending, until it is sent or paused. Needs content:read.",
    operation: "getCampaign",
    output: CampaignAnswer,
    input: Type.Object({
      siteId: SiteId,
      campaignId: CampaignId,
      waitSeconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: RENDER_WAIT_MAX_S,
          description: "wait up to this long (0-25, default 0) while it is sending",
        }),
      ),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const campaign = await waitUntilEnded(
        deps.renderWaits,
        args.campaignId,
        args.waitSeconds ?? 0,
        () => getCampaign(deps, site, args.campaignId),
        (c) => c.status === "sending",
      );
      return { value: { campaign }, note: campaignNextStep(campaign) };
    },
  }),
  tool({
    name: "cancel_campaign",
    title: "Cancel a scheduled campaign",
    description:
      "Stops a scheduled campaign before sending starts (after that: VALIDATION_ERROR). Needs content:write.",
    operation: "cancelCampaign",
    output: CampaignAnswer,
    input: Type.Object({ siteId: SiteId, campaignId: CampaignId }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const campaign = await cancelCampaign(deps, site, args.campaignId);
      return { value: { campaign }, note: campaignNextStep(campaign) };
    },
  }),
  tool({
    name: "resume_campaign",
    title: "Resume a paused campaign",
    description:
      "A campaign pauses when the mail server refuses what is not about one recipient (login, sender, message); its error quotes the reply. Once fixed, this sends to every recipient still waiting, each still mailed exactly once. Anything but a paused campaign is a VALIDATION_ERROR. Needs content:write.",
    operation: "resumeCampaign",
    output: CampaignAnswer,
    input: Type.Object({ siteId: SiteId, campaignId: CampaignId }),
    readOnly: false,
    openWorld: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const campaign = await resumeCampaign(deps, site, args.campaignId);
      return { value: { campaign }, note: campaignNextStep(campaign) };
    },
  }),
];
