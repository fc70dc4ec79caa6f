import { Type } from "@sinclair/typebox";
import {
  CampaignAnswer,
  CampaignPage,
  CreateCampaignBody,
  createCampaign,
  listCampaigns,
} from "@site/domain/newsletters";
import { getOwnSite } from "@site/domain/sites";
import { Cursor, SiteId } from "./inputs.ts";
import { type Tool, tool } from "./tool.ts";

/** The newsletter tools: the same models and domain functions as the campaign routes. */
export const NEWSLETTER_TOOLS: Tool[] = [
  tool({
    name: "list_campaigns",
    title: "List a site's newsletter campaigns",
    description:
      "Returns the site's campaigns, newest first: id, subject, status (draft, scheduled, sending, sent, cancelled), sendAt and delivery counts (queued, sent, failed, bounced); no bodies. Pass nextCursor back as cursor for the next page. Needs content:read.",
    operation: "listCampaigns",
    output: CampaignPage,
    input: Type.Object({
      siteId: SiteId,
      cursor: Type.Optional(Cursor),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "page size, default 50" })),
    }),
    readOnly: true,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      return { value: await listCampaigns(deps, site, { cursor: args.cursor, limit: args.limit }) };
    },
  }),
  tool({
    name: "create_campaign",
    title: "Create a newsletter campaign draft",
    description:
      "Creates a draft: subject (1-200 characters), optional preheader and fromName, and the mail's HTML. Images must be files of the site's library named by their url (/api/media/<key>, from list_media); unknown files, displayUrls, outside images, scripts and event handlers are refused, each named with its line. Nothing is sent: review it, then send_test_campaign and send_campaign. Needs content:write.",
    operation: "createCampaign",
    output: CampaignAnswer,
    input: Type.Object({ siteId: SiteId, ...CreateCampaignBody.properties }),
    readOnly: false,
    run: async (deps, principal, args) => {
      const site = await getOwnSite(deps, principal, args.siteId);
      const { siteId: _siteId, ...body } = args;
      const campaign = await createCampaign(deps, site, body);
      return {
        value: { campaign },
        note: `Draft ${campaign.id} created. Check it with send_test_campaign (up to 10 addresses), then send or schedule it with send_campaign; get_campaign follows it.`,
      };
    },
  }),
];
