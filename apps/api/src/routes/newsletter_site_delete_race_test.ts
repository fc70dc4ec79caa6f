import { describe, expect, test } from "bun:test";
import {
  call,
  campaign,
  deliver,
  h,
  mailsTo,
  senderProcess,
  uniq,
  useSendingBed,
} from "../../testing/newsletter_sending_bed.ts";

// A campaign of a deleted site is never sent, a send racing the delete included (CONTRACT "Mail
// replies…", issue 34 and issue 38 LOW; decision 1452): the send checks the site under the lock the
// delete takes, and a mail's end of DATA waits for the campaign to be still sending.

useSendingBed();

describe("sends racing site deletes", () => {
  test("ten sends racing ten deletes: no mail for a deleted site", async () => {
    const rounds = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const email = `race-${uniq()}@example.com`;
        return { email, ...(await campaign([email], { send: false })) };
      }),
    );
    const answers = await Promise.all(
      rounds.map(async (r) => {
        const [send, del] = await Promise.all([
          call("POST", `/api/v1/sites/${r.siteId}/campaigns/${r.cid}/send`),
          call("DELETE", `/api/v1/sites/${r.siteId}`),
        ]);
        return { send: send.status, del: del.status, error: send.body?.error?.code ?? null };
      }),
    );
    for (const a of answers) {
      expect(a.del).toBe(204);
      // Either the send went first (then the delete cancelled it) or the site was already gone.
      expect([202, 404]).toContain(a.send);
    }
    // Every delivery the sends queued runs now, as the queue would.
    const ctx = senderProcess();
    const rows = (await h.sql`
      select r.id from newsletter_recipients r join newsletter_campaigns c on c.id = r.campaign_id
      where c.id in ${h.sql(rounds.map((r) => r.cid))}`) as unknown as { id: string }[];
    for (const r of rows) await deliver(ctx, r.id).catch(() => {});
    const mailed = rounds.filter((r) => mailsTo(r.subject, r.email).length > 0);
    expect(mailed.map((r) => r.siteId)).toEqual([]);
    const statuses = (await h.sql`
      select status from newsletter_campaigns where id in ${h.sql(rounds.map((r) => r.cid))}`) as unknown as {
      status: string;
    }[];
    for (const s of statuses) expect(["draft", "cancelled"]).toContain(s.status);
  });
});
