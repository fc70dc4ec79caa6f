import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { screenshotRenders } from "@site/db";
import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

setDefaultTimeout(120_000);

// A Chromium daemon takes one render job beyond its browsers (decision 1515): while every browser films,
// one more job reads its rows and waits for a page, or composes and stores. Pages filmed at once stay
// RENDER_CONCURRENCY.
let inFlight = 0;
let mostInFlight = 0;
const pages = servePages({
  "/slow": async () => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    await Bun.sleep(1200);
    inFlight--;
    return html(LANDING);
  },
});
let h: TestApp;
let daemon: RenderDaemon;
beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: pages.host, RENDER_CONCURRENCY: "1" } });
  daemon = await startRenderDaemon(runtimeOf(h), { warm: false });
});
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
  pages.stop();
});

test("RENDER_CONCURRENCY 1: two render jobs are taken at once, one page is filmed at a time", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const o = await h.seedOrg({ credits: 100 });
    const site = await h.newSite(o.key);
    const res = await h.call("POST", `/api/v1/sites/${site.id}/media/screenshot`, {
      key: o.key,
      body: { url: pages.url("/slow") },
    });
    expect(res.status).toBe(202);
    ids.push(((await res.json()) as { renderId: string }).renderId);
  }
  let mostTaken = 0;
  await until(async () => {
    const [{ taken }] = (await h.db
      .select({ taken: sql<number>`count(*)::int` })
      .from(screenshotRenders)
      .where(
        and(
          inArray(screenshotRenders.id, ids),
          eq(screenshotRenders.status, "pending"),
          isNotNull(screenshotRenders.tryToken),
        ),
      )) as { taken: number }[];
    mostTaken = Math.max(mostTaken, taken);
    const rows = await h.db
      .select({ status: screenshotRenders.status })
      .from(screenshotRenders)
      .where(inArray(screenshotRenders.id, ids));
    return rows.every((r) => r.status === "done");
  }, 60_000);
  expect(mostTaken).toBe(2);
  expect(mostInFlight).toBe(1);
});
