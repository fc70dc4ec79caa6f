import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { screenshotRenders } from "@site/db";
import { completeRender, sweepPendingRenders } from "@site/domain/screenshots";
import { and, asc, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { buildTestApp, type TestApp } from "../../testing/mod.ts";

// Admission per organization (decision 0470): at most RENDER_ORG_CONCURRENCY renders of one organization
// are in progress (admitted, not ended). Three kinds of transaction admit: a new request (which also
// holds the organization's row for its debit), a render's end (completeRender holds only the render's
// row) and the sweeper (no row at all). Each counts what is in progress, then admits the oldest waiting
// renders into the room it counted, in two statements. Without the per-organization lock an end that
// admits two renders can commit between a new request's count and its admission, and the request then
// admits a third. The window is a round trip wide, so each round below first makes room that nobody
// filled (as a crash between a render's end and the next admission leaves it: the sweeper's case), then
// races an end, two sweeps and new requests over it, and counts.

let h: TestApp;
beforeAll(async () => {
  h = await buildTestApp();
});
afterAll(() => h.close());

const ROUNDS = 20;

async function renders(orgId: string, where: "admitted" | "waiting") {
  return h.db
    .select({ id: screenshotRenders.id })
    .from(screenshotRenders)
    .where(
      and(
        eq(screenshotRenders.orgId, orgId),
        eq(screenshotRenders.status, "pending"),
        where === "admitted"
          ? isNotNull(screenshotRenders.dispatchedAt)
          : isNull(screenshotRenders.dispatchedAt),
      ),
    )
    .orderBy(asc(screenshotRenders.createdAt), asc(screenshotRenders.id))
    .then((rows) => rows.map((r) => r.id));
}

describe("render admission per organization under races (0470)", () => {
  test("racing completeRender and the sweeper against new requests never puts an organization past its admission cap", async () => {
    const cap = h.ctx.config.renderOrgConcurrency;
    expect(cap).toBe(2);
    const o = await h.seedOrg({ credits: 100_000 });
    const site = await h.call("POST", "/api/v1/sites", {
      key: o.key,
      body: { name: "Race", slug: `race-${Math.random().toString(36).slice(2, 9)}` },
    });
    const siteId = ((await site.json()) as { site: { id: string } }).site.id;
    let n = 0;
    const shot = async () => {
      const res = await h.call("POST", `/api/v1/sites/${siteId}/media/screenshot`, {
        key: o.key,
        body: { url: `https://example.com/race-${n++}` },
      });
      expect(res.status).toBe(202);
    };
    const peaks: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      while ((await renders(o.org.id, "waiting")).length < 4) await shot();
      // Room nobody filled: one render in progress of the cap's two, others waiting (a lost admission).
      const admitted = await renders(o.org.id, "admitted");
      await h.db
        .update(screenshotRenders)
        .set({ status: "done" })
        .where(inArray(screenshotRenders.id, admitted.slice(1)));
      let running = admitted[0];
      if (!running) {
        [running] = await renders(o.org.id, "waiting");
        await h.db
          .update(screenshotRenders)
          .set({ dispatchedAt: new Date() })
          .where(eq(screenshotRenders.id, running!));
      }
      expect(await renders(o.org.id, "admitted")).toHaveLength(1);

      await Promise.all([
        shot(),
        completeRender(h.ctx, running!, {
          imageKey: `race/${round}.jpg`,
          width: 10,
          height: 10,
          warnings: [],
        }),
        shot(),
        sweepPendingRenders(h.ctx),
        shot(),
        sweepPendingRenders(h.ctx),
        shot(),
      ]);
      const inProgress = (await renders(o.org.id, "admitted")).length;
      peaks.push(inProgress);
      expect(inProgress, `round ${round}: renders in progress (${peaks.join(",")})`).toBeLessThanOrEqual(cap);
    }
    // The rounds did admit (the room was filled, not left empty): the cap was reached.
    expect(Math.max(...peaks)).toBe(cap);
  }, 120_000);
});
