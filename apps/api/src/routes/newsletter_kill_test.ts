import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnChild } from "@site/db/testing";
import { type SmtpSink, startSmtpSink } from "@site/domain/testing";
import { sql } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";
import { queueCampaignTo } from "../../testing/newsletter_campaign.ts";

type Json = any;
const TOTAL = 2000;
/** The sender's SMTP connections (NEWSLETTER_CONCURRENCY): the kill waits until each holds a message. */
const CONNECTIONS = 4;
const ROOT = new URL("../../../..", import.meta.url).pathname;

let h: TestApp;
let sink: SmtpSink;
let dataDir: string;
beforeAll(async () => {
  sink = await startSmtpSink({ parse: false });
  h = await buildTestApp();
  dataDir = mkdtempSync(join(tmpdir(), "news-kill-"));
});
afterAll(async () => {
  await h.close();
  await sink.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The sending process as the render daemon runs it, on the test database and the loopback SMTP server. */
function spawnSender() {
  return spawnChild("libs/domain/testing/newsletter_sender_child.ts", {
    cwd: ROOT,
    env: {
      DATABASE_URL: h.databaseUrl,
      REDIS_URL: "",
      SMTP_URL: sink.url,
      SMTP_RATE_PER_MINUTE: "0",
      NEWSLETTER_LEASE_MS: "1500",
      NEWSLETTER_SWEEP_EVERY_MS: "200",
      NEWSLETTER_CONCURRENCY: String(CONNECTIONS),
      SECRET_KEY: "test-secret-key-0123456789",
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
    },
  });
}

describe("a send survives its process being killed", () => {
  test(`${TOTAL} subscribers, the sending process SIGKILLed in the middle and started again: each address gets exactly one message`, async () => {
    const { key } = await h.seedOrg();
    const emails = Array.from({ length: TOTAL }, (_, i) => `reader${i}@example.com`);
    // Queued here (this process has no sender): the child's start-up sweep takes the campaign up.
    const { siteId, campaignId } = await queueCampaignTo(h, key, emails, "Big");

    const first = spawnSender();
    await first.ready;
    // The kill lands where the sender is between steps, never inside the microseconds between its
    // COMMIT and the end of DATA (decision 1102: a kill there is the one window SMTP and PostgreSQL
    // leave, and a random kill would find it now and then). Once a third is delivered, the server
    // holds its answer to each end of DATA; when every connection waits on one (each row committed
    // sent, its final "." read), the process is killed. Other rows are claimed and waiting for a
    // connection: their leases run out and the second process takes them.
    let killedAt = -1;
    const held: (() => void)[] = [];
    const allHeld = new Promise<void>((resolve) => {
      sink.onMessage = (n) => {
        if (n < TOTAL / 3 || sink.holdData) return;
        killedAt = n;
        sink.holdData = () =>
          new Promise<void>((release) => {
            held.push(release);
            if (held.length === CONNECTIONS) resolve();
          });
      };
    });
    await allHeld;
    // Let PostgreSQL finish the held rows' COMMITs (written before each final ".").
    await Bun.sleep(300);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    sink.onMessage = undefined;
    // The server read those messages whole: it accepts them though their client is gone.
    sink.holdData = null;
    for (const release of held) release();
    expect(held.length).toBe(CONNECTIONS);
    expect(killedAt).toBeLessThan(TOTAL);
    const [{ left }] = [
      ...(await h.db.execute<{ left: number }>(
        sql`select count(*)::int as left from newsletter_recipients where campaign_id = ${campaignId}::uuid and status in ('queued', 'sending')`,
      )),
    ];
    expect(left).toBeGreaterThan(0);

    const second = spawnSender();
    await second.ready;
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const res = (await (
          await h.call("GET", `/api/v1/sites/${siteId}/campaigns/${campaignId}`, { key })
        ).json()) as Json;
        if (res.campaign.status === "sent") {
          expect(res.campaign.counts).toEqual({
            queued: 0,
            sent: TOTAL,
            failed: 0,
            bounced: 0,
            refusedByPolicy: 0,
          });
          break;
        }
        if (Date.now() > deadline) throw new Error(`not sent: ${JSON.stringify(res.campaign.counts)}`);
        await Bun.sleep(100);
      }
      // A row is committed sent just before its end of DATA: its message may still be on the wire.
      await sink.waitFor(TOTAL, 30_000).catch(() => {});
      // Then nothing more may come (a duplicate would be a message past TOTAL).
      await Bun.sleep(500);
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
    const perAddress = new Map<string, number>();
    for (const m of sink.messages) for (const to of m.to) perAddress.set(to, (perAddress.get(to) ?? 0) + 1);
    const twice = [...perAddress].filter(([, n]) => n > 1);
    const missing = emails.filter((e) => !perAddress.has(e));
    // On a failure, say what the database thinks of the addresses concerned.
    const odd = [...missing, ...twice.map(([e]) => e)];
    const rows =
      odd.length === 0
        ? []
        : [
            ...(await h.db.execute(
              sql`select email, status, tries, last_error from newsletter_recipients where campaign_id = ${campaignId}::uuid and email in ${odd}`,
            )),
          ];
    if (odd.length > 0) console.error("killed at", killedAt, "rows:", JSON.stringify(rows));
    expect({ messages: sink.messages.length, twice, missing }).toEqual({
      messages: TOTAL,
      twice: [],
      missing: [],
    });
  }, 180_000);
});
