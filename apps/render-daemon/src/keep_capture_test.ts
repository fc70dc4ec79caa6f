import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { mediaFiles } from "@site/db";
import { createStubPipeline, screenshotEnded } from "@site/render-daemon/testing";
import { eq, sql } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

// A screenshot's capture is kept on its project while the frame's bytes are stored (worker.ts): the
// render is listed and done only once both are. A capture that cannot be kept fails the try, and the
// frame stored beside it is removed: nothing listed, nothing left in the store.
let h: TestApp;
let daemon: RenderDaemon;
beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: "127.0.0.1:9" } });
  // A real refusal by the database: keeping a capture on its project raises.
  await h.db.execute(sql`
    create or replace function refuse_capture_keep() returns trigger language plpgsql as $$
    begin raise exception 'capture keep refused by the test'; end $$`);
  await h.db.execute(sql`
    create trigger refuse_capture_keep before update on screenshot_projects
    for each row when (new.variants is distinct from old.variants) execute function refuse_capture_keep()`);
  daemon = await startRenderDaemon(runtimeOf(h), {
    pipeline: createStubPipeline({ filmMs: 5 }),
    warm: false,
  });
});
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
});

test("a capture that cannot be kept fails the render; its frame is neither listed nor left stored", async () => {
  const { row, siteId } = await screenshotEnded(h, "http://127.0.0.1:9/keep");
  expect(row.status).toBe("failed");
  expect(await h.db.select().from(mediaFiles).where(eq(mediaFiles.siteId, siteId))).toEqual([]);
  const left: string[] = [];
  for await (const o of h.store.list(`site-media/${siteId}/`)) left.push(o.key);
  expect(left).toEqual([]);
});
