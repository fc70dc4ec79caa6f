import { ListQuery } from "@site/domain/core";
import {
  CampaignAnswer,
  CampaignPage,
  CreateCampaignBody,
  cancelCampaign,
  createCampaign,
  deleteCampaign,
  getCampaign,
  listCampaigns,
  type MailContext,
  previewCampaign,
  previewHeaders,
  resumeCampaign,
  revokeCampaignMedia,
  SendCampaignBody,
  sendCampaign,
  sendTestCampaign,
  TestCampaignAccepted,
  TestCampaignBody,
  UpdateCampaignBody,
  updateCampaign,
} from "@site/domain/newsletters";
import { getOwnSite } from "@site/domain/sites";
import { Elysia, t } from "elysia";
import type { AuthMacros } from "../auth.ts";
import type { AppDeps } from "../deps.ts";
import { errorResponses, errors, queryOf } from "../schemas.ts";

const base = "/api/v1/sites/:siteId/campaigns";
const one = `${base}/:campaignId`;
const tags = ["newsletters"];

/** A site's newsletter campaigns: drafts, preview, test sends, sending and cancelling. */
export function campaignRoutes(deps: AppDeps & MailContext, auth: AuthMacros) {
  const site = async (principal: Parameters<typeof getOwnSite>[1], siteId: string) =>
    getOwnSite(deps, principal, siteId);
  return new Elysia()
    .use(auth)
    .get(
      base,
      async ({ principal, params, query }) =>
        listCampaigns(deps, await site(principal, params.siteId), query),
      {
        operation: "listCampaigns",
        scope: "content:read",
        query: queryOf(ListQuery),
        response: { 200: CampaignPage, ...errors(400, 404) },
        detail: { summary: "List a site's campaigns (newest first, without bodies)", tags },
      },
    )
    .post(
      base,
      async ({ principal, params, body, set }) => {
        const campaign = await createCampaign(deps, await site(principal, params.siteId), body);
        set.status = 201;
        return { campaign };
      },
      {
        operation: "createCampaign",
        scope: "content:write",
        body: CreateCampaignBody,
        response: { 201: CampaignAnswer, ...errors(400, 404) },
        detail: {
          summary: "Create a campaign draft",
          description:
            "The HTML names media by the bare /api/media/<key> paths of the site's library (or its template host's). An unknown file, another site's file, a displayUrl (k or t), an outside image, a script or an event handler answers 400 whose details list each one with its line; nothing is stored. The answer's html carries member-signed URLs.",
          tags,
        },
      },
    )
    .get(
      one,
      async ({ principal, params }) => ({
        campaign: await getCampaign(deps, await site(principal, params.siteId), params.campaignId),
      }),
      {
        operation: "getCampaign",
        scope: "content:read",
        response: { 200: CampaignAnswer, ...errors(404) },
        detail: {
          summary: "Read a campaign: the draft with member-signed media, status and delivery counts",
          tags,
        },
      },
    )
    .patch(
      one,
      async ({ principal, params, body }) => ({
        campaign: await updateCampaign(deps, await site(principal, params.siteId), params.campaignId, body),
      }),
      {
        operation: "updateCampaign",
        scope: "content:write",
        body: UpdateCampaignBody,
        response: { 200: CampaignAnswer, ...errors(400, 404) },
        detail: {
          summary: "Change a draft (or a cancelled campaign, which becomes a draft again)",
          description: "Same HTML rules as create. A scheduled, sending or sent campaign answers 400.",
          tags,
        },
      },
    )
    .delete(
      one,
      async ({ principal, params, set }) => {
        await deleteCampaign(deps, await site(principal, params.siteId), params.campaignId);
        set.status = 204;
        return null;
      },
      {
        operation: "deleteCampaign",
        scope: "content:write",
        response: { 204: t.Null(), ...errors(400, 404) },
        detail: { summary: "Delete a campaign (not while it is sending: 400)", tags },
      },
    )
    .get(
      `${one}/preview`,
      async ({ principal, params }) =>
        new Response(await previewCampaign(deps, await site(principal, params.siteId), params.campaignId), {
          headers: previewHeaders(deps),
        }),
      {
        operation: "previewCampaign",
        scope: "content:read",
        detail: {
          summary: "The campaign as an HTML page for a preview frame",
          description:
            "Media keep their bare /api/media/<key> paths: the dashboard's frame reads them with the member's session cookie (site_session); nothing else opens them. Served with a strict Content-Security-Policy (no script, no form, images only from this service).",
          tags,
          responses: {
            200: {
              description: "The mail as an HTML page",
              content: { "text/html": { schema: { type: "string" } } },
            },
            ...errorResponses(404),
          },
        } as never,
      },
    )
    .post(
      `${one}/test`,
      async ({ principal, params, body, set }) => {
        await sendTestCampaign(deps, await site(principal, params.siteId), params.campaignId, body.to);
        set.status = 202;
        return { accepted: true as const, to: body.to.length };
      },
      {
        operation: "sendTestCampaign",
        scope: "content:write",
        body: TestCampaignBody,
        response: {
          202: TestCampaignAccepted,
          ...errors(400, 404, 429),
        },
        detail: {
          summary: "Send a test of the campaign to up to 10 addresses",
          description:
            "Subject prefixed [Test]; images with share tokens as in the real send; no unsubscribe headers. Sent in the background. Addresses of the organization's members are free; others count against NEWSLETTER_TEST_SENDS_PER_DAY (default 50) per organization and UTC day: beyond it 429 with Retry-After, nothing sent.",
          tags,
        },
      },
    )
    .post(
      `${one}/send`,
      async ({ principal, params, body, set }) => {
        const campaign = await sendCampaign(
          deps,
          await site(principal, params.siteId),
          params.campaignId,
          body ?? {},
        );
        set.status = 202;
        return { campaign };
      },
      {
        operation: "sendCampaign",
        scope: "content:write",
        body: t.Optional(SendCampaignBody),
        response: { 202: CampaignAnswer, ...errors(400, 404, 503) },
        detail: {
          summary: "Send a draft now, or schedule it (sendAt)",
          description:
            "Without sendAt the campaign is sending at once: one recipient per active subscriber, each mailed exactly once. With a future sendAt it is scheduled (a sendAt in the past answers 400). A site with no active subscriber answers 400. Counts (queued, sent, failed, bounced) show progress; the campaign ends sent.",
          tags,
        },
      },
    )
    .post(
      `${one}/resume`,
      async ({ principal, params, set }) => {
        const campaign = await resumeCampaign(deps, await site(principal, params.siteId), params.campaignId);
        set.status = 202;
        return { campaign };
      },
      {
        operation: "resumeCampaign",
        scope: "content:write",
        response: { 202: CampaignAnswer, ...errors(400, 404) },
        detail: {
          summary: "Resume a paused campaign (after the mail server was fixed)",
          description:
            "A campaign pauses when the mail server refuses something that is not about one recipient (the login, the sender, the message) or keeps failing; its `error` quotes the reply, and nobody is marked bounced for it. Resuming sends to every recipient still waiting; each recipient still gets exactly one mail. Anything but a paused campaign answers 400.",
          tags,
        },
      },
    )
    .post(
      `${one}/revoke-media`,
      async ({ principal, params }) => ({
        campaign: await revokeCampaignMedia(deps, await site(principal, params.siteId), params.campaignId),
      }),
      {
        operation: "revokeCampaignMedia",
        scope: "content:write",
        response: { 200: CampaignAnswer, ...errors(404) },
        detail: {
          summary: "Revoke the image links of every mail sent for the campaign",
          description:
            "A campaign's mails carry image links that stay readable for NEWSLETTER_MAIL_MEDIA_TTL_S (a year by default). After this they answer 403 (caches may keep an image up to an hour); mails sent later carry new links. Deleting the campaign revokes them too.",
          tags,
        },
      },
    )
    .post(
      `${one}/cancel`,
      async ({ principal, params }) => ({
        campaign: await cancelCampaign(deps, await site(principal, params.siteId), params.campaignId),
      }),
      {
        operation: "cancelCampaign",
        scope: "content:write",
        response: { 200: CampaignAnswer, ...errors(400, 404) },
        detail: { summary: "Cancel a scheduled campaign (until sending starts; after: 400)", tags },
      },
    );
}
