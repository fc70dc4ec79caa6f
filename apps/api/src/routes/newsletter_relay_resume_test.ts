import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { createLogger } from "@site/config";
import { createSmtpMailer, sweepNewsletters } from "@site/domain/newsletters";
import {
  campaign,
  campaignRow,
  deliver,
  h,
  mailsTo,
  outcome,
  row,
  senderProcess,
  uniq,
  useSendingBed,
} from "../../testing/newsletter_sending_bed.ts";

// A campaign paused because its relay could not be reached (no reply at all: refused, reset, timed
// out) resumes by itself: the newsletter sweep asks the relay, and once it answers the campaign is
// sending again (decision 1450). A pause for a refusal (AUTH, MAIL FROM, policy) waits for a member.

useSendingBed();

async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const resumeFlag = async (cid: string) =>
  (await h.sql`select resume_when_reachable as r from newsletter_campaigns where id = ${cid}::uuid`)[0]!
    .r as boolean;

describe("a pause for an unreachable relay ends by itself", () => {
  test("the last try finds nothing listening: paused, nobody bounced; the sweep leaves it paused while the relay is gone and resumes it once it answers; each recipient gets one mail", async () => {
    const [a, b] = [`a-${uniq()}@example.com`, `b-${uniq()}@example.com`];
    const c = await campaign([a, b]);
    const down = senderProcess();
    const dead = createSmtpMailer(`smtp://127.0.0.1:${await deadPort()}`, {
      connections: 1,
      log: createLogger("silent" as never),
      timeoutMs: 1000,
    });
    const gone = { ...down, mailer: dead };
    try {
      expect(await outcome(deliver(gone, c.ids[a]!, 5, 5))).toBe("ok");
      const paused = await campaignRow(c.cid);
      expect(paused.status).toBe("paused");
      expect(paused.error).toContain("could not be reached");
      expect(await resumeFlag(c.cid)).toBe(true);
      expect((await row(c.cid, a)).status).toBe("queued");

      // The relay is still gone: the sweep asks it and leaves the campaign paused.
      await sweepNewsletters(gone);
      expect((await campaignRow(c.cid)).status).toBe("paused");

      // Back: the sweep resumes it (a new run), and the deliveries go out.
      const up = senderProcess();
      await sweepNewsletters(up);
      const resumed = await campaignRow(c.cid);
      expect(resumed).toMatchObject({ status: "sending", error: null, runs: 1 });
      expect(await resumeFlag(c.cid)).toBe(false);
      expect(await outcome(deliver(up, c.ids[a]!))).toBe("ok");
      expect(await outcome(deliver(up, c.ids[b]!))).toBe("ok");
      expect((await campaignRow(c.cid)).status).toBe("sent");
      expect(mailsTo(c.subject, a)).toHaveLength(1);
      expect(mailsTo(c.subject, b)).toHaveLength(1);
    } finally {
      await dead.close();
    }
  });

  test("a pause for a refusal (the relay answered 5xx to MAIL FROM) is not resumed by the sweep", async () => {
    const { sink } = await import("../../testing/newsletter_sending_bed.ts");
    const a = `a-${uniq()}@example.com`;
    const c = await campaign([a]);
    const ctx = senderProcess();
    sink.refuseMailFrom = "550 5.7.1 sender not allowed";
    try {
      expect(await outcome(deliver(ctx, c.ids[a]!))).toBe("ok");
    } finally {
      sink.refuseMailFrom = null;
    }
    expect((await campaignRow(c.cid)).status).toBe("paused");
    expect(await resumeFlag(c.cid)).toBe(false);
    await sweepNewsletters(ctx);
    expect((await campaignRow(c.cid)).status).toBe("paused");
  });
});
