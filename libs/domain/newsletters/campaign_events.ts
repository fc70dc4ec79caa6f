import type { Database, Tx } from "@site/db";
import { type Context, type OwnedSite, siteOfRecord } from "@site/domain/core";
import { recordEvent } from "@site/domain/webhooks";
import { sql } from "drizzle-orm";

/** How a campaign reads as its GET answers it (getCampaign), given a context on a transaction. */
type CampaignReader = (ctx: Context, site: OwnedSite, campaignId: string) => Promise<unknown>;

/**
 * Records `newsletter.campaign.sent` or `newsletter.campaign.paused` in the transaction that changed the
 * campaign's status (the webhook outbox, decision 0840); `data` is the campaign as its GET answers it,
 * read through that transaction so it shows the new status.
 */
export async function recordCampaignEvent(
  ctx: Context,
  tx: Tx,
  event: {
    campaign: { id: string; siteId: string };
    type: "newsletter.campaign.sent" | "newsletter.campaign.paused";
    read: CampaignReader;
  },
): Promise<void> {
  const { campaign } = event;
  const [site] = await tx.execute<{ org_id: string }>(
    sql`select org_id from sites where id = ${campaign.siteId}::uuid`,
  );
  if (!site) return;
  await recordEvent(tx, {
    orgId: site.org_id,
    type: event.type,
    data: () =>
      event.read(
        { ...ctx, db: tx as unknown as Database },
        siteOfRecord({ id: campaign.siteId, orgId: site.org_id }),
        campaign.id,
      ),
  });
}
