// Queueing a screenshot through the API and waiting for its end, for daemon tests.
import type { TestApp } from "@site/api/testing";
import { screenshotRenders } from "@site/db";
import { eq } from "drizzle-orm";

/** The render row of a screenshot of `url` queued for a fresh organization's site, once it ended. */
export async function screenshotEnded(
  h: TestApp,
  url: string,
): Promise<{ row: typeof screenshotRenders.$inferSelect; siteId: string }> {
  const o = await h.seedOrg({ credits: 100 });
  const site = await h.newSite(o.key);
  const res = await h.call("POST", `/api/v1/sites/${site.id}/media/screenshot`, {
    key: o.key,
    body: { url },
  });
  if (res.status !== 202) throw new Error(`the screenshot was not queued: ${res.status} ${await res.text()}`);
  const { renderId } = (await res.json()) as { renderId: string };
  for (let i = 0; i < 600; i++) {
    const [row] = await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, renderId));
    if (row && row.status !== "pending") return { row, siteId: site.id };
    await Bun.sleep(50);
  }
  throw new Error(`render ${renderId} had not ended after 30 s`);
}
