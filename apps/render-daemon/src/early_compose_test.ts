import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { sampleImage } from "@site/domain/testing";
import { createStubPipeline, screenshotEnded } from "@site/render-daemon/testing";
import { sql } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";
import type { Capture, RenderPipeline } from "./render_types.ts";

// A film tells of an early shot (FilmLimits.early, decision 1513) and the worker composes it while the
// page's quiet window runs. The frame stored is the early compose only when the film ends with that very
// shot; when the page changed after it, the film ends with another capture, and that one is composed.
let h: TestApp;
let daemon: RenderDaemon;
/** Whether the film ends with its early shot (kept) or with a later one (the page changed). */
let keepEarly = true;
const composed: string[] = [];
const FRAME_BYTES = { early: 40_000, final: 50_000 };

beforeAll(async () => {
  h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: "127.0.0.1:9" } });
  // every stage a render shows to polls, in order
  await h.db.execute(
    sql`create table stage_log (render_id uuid, stage text, at timestamptz default clock_timestamp())`,
  );
  await h.db.execute(sql`
    create or replace function log_stage() returns trigger language plpgsql as $$
    begin insert into stage_log (render_id, stage) values (new.id, new.stage); return new; end $$`);
  await h.db.execute(sql`
    create trigger log_stage after update on screenshot_renders
    for each row when (new.stage is distinct from old.stage) execute function log_stage()`);
  const stub = createStubPipeline({ filmMs: 10 });
  const shot = (c: Capture, name: "early" | "final"): Capture => ({
    ...c,
    png: sampleImage("png", { width: c.width, height: c.height, size: name === "early" ? 30_000 : 31_000 }),
  });
  const which = new WeakMap<Uint8Array, "early" | "final">();
  const pipeline: RenderPipeline = {
    ...stub,
    async film(s, limits) {
      const c = await stub.film(s, limits);
      const early = shot(c, "early");
      which.set(early.png, "early");
      limits?.early?.(early);
      await Bun.sleep(100); // the quiet window
      if (keepEarly) return { ...early, warnings: ["kept"] };
      const final = shot(c, "final");
      which.set(final.png, "final");
      return final;
    },
    async compose(c) {
      const name = which.get(c.png) ?? "unknown";
      composed.push(name);
      return {
        bytes: sampleImage("png", {
          width: c.width,
          height: c.height,
          size: FRAME_BYTES[name as "early"] ?? 1,
        }),
        width: c.width,
        height: c.height,
        contentType: "image/png",
      };
    },
  };
  daemon = await startRenderDaemon(runtimeOf(h), { pipeline, warm: false });
});
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
});

/** Renders one screenshot and answers the bytes of its stored frame and the stages it showed. */
async function renderFrame(): Promise<{ bytes: number; stages: string[] }> {
  const { row } = await screenshotEnded(h, "http://127.0.0.1:9/early");
  expect(row.status).toBe("done");
  const head = await h.store.head(row.imageKey as string);
  const stages = (await h.db.execute(
    sql`select stage from stage_log where render_id = ${row.id} order by at`,
  )) as unknown as { stage: string }[];
  return { bytes: head?.size ?? 0, stages: stages.map((r) => r.stage) };
}

describe("an early shot's compose", () => {
  test("is the frame stored when the film ends with that shot: composed once, no compose stage shown", async () => {
    keepEarly = true;
    composed.length = 0;
    const r = await renderFrame();
    expect(r.bytes).toBe(FRAME_BYTES.early);
    expect(composed).toEqual(["early"]);
    // composed while the film ran: the render goes from film to store
    expect(r.stages).not.toContain("compose");
    expect(r.stages).toContain("store");
  });

  test("is dropped when the film ends with a later shot: that one is composed and stored", async () => {
    keepEarly = false;
    composed.length = 0;
    const r = await renderFrame();
    expect(r.bytes).toBe(FRAME_BYTES.final);
    expect(composed).toEqual(["early", "final"]);
    expect(r.stages).toContain("compose");
  });
});
