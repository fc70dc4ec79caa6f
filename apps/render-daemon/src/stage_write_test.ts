import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { createStubPipeline, screenshotEnded } from "@site/render-daemon/testing";
import { sql } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

// The stage a poll shows is written beside the work (worker.ts, stageTimer). A stage write that fails
// (the database refusing that one statement) used to fail the whole try after its film: the render was
// filmed again on the retry, and again, until it failed for good. It is only what polls show: the
// render goes on. (Found looking for the cause of a render the farm bench saw filmed twice.)
let h: TestApp;
let daemon: RenderDaemon;
const films: string[] = [];
beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: "127.0.0.1:9" } });
  // A real refusal by the database: any write of the "compose" stage raises.
  await h.db.execute(sql`
    create or replace function refuse_compose_stage() returns trigger language plpgsql as $$
    begin
      if new.stage = 'compose' then raise exception 'stage write refused by the test'; end if;
      return new;
    end $$`);
  await h.db.execute(sql`
    create trigger refuse_compose_stage before update on screenshot_renders
    for each row when (new.stage is distinct from old.stage) execute function refuse_compose_stage()`);
  daemon = await startRenderDaemon(runtimeOf(h), {
    pipeline: createStubPipeline({ filmMs: 10, composeMs: 1, onFilm: (url) => films.push(url) }),
    warm: false,
  });
});
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
});

test("a stage write that fails does not fail the render: done on its first try, filmed once", async () => {
  const { row } = await screenshotEnded(h, "http://127.0.0.1:9/stage");
  expect(row).toMatchObject({ status: "done", attempts: 1 });
  expect(films).toEqual(["http://127.0.0.1:9/stage"]);
});
