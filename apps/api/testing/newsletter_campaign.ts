import type { TestApp } from "./mod.ts";

/**
 * A new site of `key`'s organization with `emails` as its subscribers and a campaign to them, queued for
 * sending (202): the ids. Throws when a step does not answer as it should (every address imported, the
 * send accepted), so a test's own expectations are about the sending.
 */
export async function queueCampaignTo(
  h: TestApp,
  key: string,
  emails: string[],
  subject: string,
): Promise<{ siteId: string; campaignId: string }> {
  const { id: siteId } = await h.newSite(key, { name: subject });
  const imported = await h.call("POST", `/api/v1/sites/${siteId}/subscribers`, {
    key,
    body: { subscribers: emails.map((email) => ({ email })) },
  });
  const count = ((await imported.json()) as { imported?: number }).imported;
  if (count !== emails.length) throw new Error(`queueCampaignTo: ${count} of ${emails.length} imported`);
  const created = await h.call("POST", `/api/v1/sites/${siteId}/campaigns`, {
    key,
    body: { subject, html: "<p>Hello, reader.</p>" },
  });
  if (created.status !== 201) throw new Error(`queueCampaignTo: ${created.status} ${await created.text()}`);
  const campaignId = ((await created.json()) as { campaign: { id: string } }).campaign.id;
  const sent = await h.call("POST", `/api/v1/sites/${siteId}/campaigns/${campaignId}/send`, { key });
  if (sent.status !== 202) throw new Error(`queueCampaignTo: send ${sent.status} ${await sent.text()}`);
  return { siteId, campaignId };
}
