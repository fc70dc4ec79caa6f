/**
 * Bench: send a campaign to 10,000 subscribers through a real SMTP server on loopback (smtp-server,
 * counting only), throttling off. Reports messages per second (target ≥ 200/s on this machine) and
 * the peak memory of the process while sending. Runs on TEST_DATABASE_URL (default: local PostgreSQL).
 *   bun scripts/bench/newsletter.ts [recipients=10000] [concurrency=16]
 */

import { buildTestApp } from "@site/api/testing";
import { addLibraryFile } from "@site/domain/media";
import { createSmtpMailer, startNewsletterSender } from "@site/domain/newsletters";
import { sampleImage } from "@site/domain/testing";
import { sql } from "drizzle-orm";

const TOTAL = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
// The SMTP server runs in a process of its own, so that its work is not counted as the sender's.
const child = Bun.spawn(["bun", new URL("./_smtp_sink.ts", import.meta.url).pathname], {
  stdout: "pipe",
  stderr: "inherit",
});
const sink = { url: "", count: 0 };
const lines = (async () => {
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let buf = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buf += new TextDecoder().decode(value);
    let nl = buf.indexOf("\n");
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith("smtp://")) sink.url = line;
      else if (line.startsWith("count ")) sink.count = Number(line.slice(6));
      nl = buf.indexOf("\n");
    }
  }
})();
while (!sink.url) await Bun.sleep(20);
const h = await buildTestApp({
  env: {
    SMTP_URL: sink.url,
    SMTP_RATE_PER_MINUTE: "0",
    NEWSLETTER_CONCURRENCY: String(CONCURRENCY),
    NEWSLETTER_SWEEP_EVERY_MS: "1000",
  },
});
const mailer = createSmtpMailer(sink.url, { connections: CONCURRENCY, log: h.ctx.log });
const sender = await startNewsletterSender(h.ctx, { mailer });
try {
  const owner = await h.seedOrg();
  const site = (await (
    await h.call("POST", "/api/v1/sites", {
      key: owner.key,
      body: { name: "Bench", slug: `bench-news-${Date.now()}` },
    })
  ).json()) as any;
  const siteId = site.site.id as string;
  const file = await addLibraryFile(h.ctx, { siteId, bytes: sampleImage("png"), source: "upload" });
  await h.db.execute(sql`
    insert into newsletter_subscribers (site_id, email, status, confirmed_at)
    select ${siteId}::uuid, 'reader' || i || '@example.com', 'active', now() from generate_series(1, ${TOTAL}) i`);
  const html = `<h1>Spring</h1>${"<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>".repeat(40)}<img src="${file.url}" alt="x"><p><a href="https://example.com">More</a></p>`;
  const created = (await (
    await h.call("POST", `/api/v1/sites/${siteId}/campaigns`, {
      key: owner.key,
      body: { subject: "Bench", html },
    })
  ).json()) as any;
  const id = created.campaign.id as string;
  console.log(`seeded ${TOTAL} subscribers; sending with concurrency ${CONCURRENCY}, throttling off`);
  global.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 50);
  const t0 = performance.now();
  const res = await h.call("POST", `/api/v1/sites/${siteId}/campaigns/${id}/send`, { key: owner.key });
  if (res.status !== 202) throw new Error(`send answered ${res.status}: ${await res.text()}`);
  const accepted = performance.now() - t0;
  let last = 0;
  const progress = setInterval(() => {
    const s = (performance.now() - t0) / 1000;
    console.log(`${s.toFixed(1)} s: ${sink.count} delivered (${((sink.count - last) / 1).toFixed(0)}/s)`);
    last = sink.count;
  }, 1000);
  while (sink.count < TOTAL) await Bun.sleep(50);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(progress);
  clearInterval(sampler);
  const [row] = [
    ...(await h.db.execute<{ sent: number }>(
      sql`select count(*)::int as sent from newsletter_recipients where campaign_id = ${id}::uuid and status = 'sent'`,
    )),
  ];
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  console.log(`send accepted in ${accepted.toFixed(0)} ms (recipient rows + job)`);
  console.log(
    `${TOTAL} messages in ${seconds.toFixed(1)} s: ${(TOTAL / seconds).toFixed(0)} messages/s (target ≥ 200/s); rows sent: ${row?.sent}; SMTP sink received ${sink.count}`,
  );
  console.log(
    `memory: rss ${mb(base.rss)} before, peak ${mb(peakRss)} (+${mb(peakRss - base.rss)}); heap used peak ${mb(peakHeap)}`,
  );
} finally {
  await sender.stop({ graceMs: 1000 });
  await mailer.close();
  await h.close();
  child.kill();
  await lines;
}
