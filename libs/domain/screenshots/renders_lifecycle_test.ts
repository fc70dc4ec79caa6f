import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { screenshotRenders } from "@site/db";
import { JOBS } from "@site/queue";
import { eq } from "drizzle-orm";
import {
  beginRenderTry,
  completeRender,
  failRender,
  findRender,
  getRender,
  insertPendingRender,
  RENDER_TRIES,
  releaseRenderTry,
  setRenderStage,
} from "./renders.ts";
import {
  appError,
  balance,
  eventsOf,
  handle,
  inProgress,
  ledger,
  type Org,
  org,
  renderCtx,
  row,
  shoot,
  subscribe,
  useRendersDb,
  waiting,
} from "./testing/renders_bed.ts";

// Render admission and settlement at the domain level, on a real PostgreSQL and the real in-process
// queue, without a browser (the configured Chromium is only looked up, never started). This file: reading
// renders, tries, and a render's end (event, refund once, the next admitted). Focused tests of
// renders.ts with renders_admission_test.ts and renders_sweeper_test.ts (docs/mutation/renders.md).

useRendersDb();

describe("reading renders", () => {
  test("findRender: null for a malformed or unknown id, the row otherwise", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id] = await waiting(o, 1);
    expect(await findRender(ctx, "not-a-uuid")).toBeNull();
    expect(await findRender(ctx, randomUUID())).toBeNull();
    expect((await findRender(ctx, id!))?.id).toBe(id!);
  });

  test("getRender: 404 for a clip or another site's render; displayUrl only for a done render with an image", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const other = await org(ctx);
    const [still, done, doneNoImage] = await waiting(o, 3);
    const [clip] = await waiting(o, 1, "clip");
    const notFound = (siteOwner: Org, id: string) =>
      getRender(ctx, siteOwner.principal, siteOwner.siteId, id).then(() => null, appError);
    expect(await notFound(o, clip!)).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await notFound(other, still!)).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await notFound(o, randomUUID())).toMatchObject({
      code: "NOT_FOUND",
      message: "screenshot render not found",
    });
    expect(await getRender(ctx, o.principal, o.siteId, still!)).toEqual({
      renderId: still!,
      status: "pending",
      sourceUrl: "https://example.com/w0",
      imageUrl: null,
      credits: 10,
      error: null,
    });
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done", imageKey: `site-media/${o.siteId}/a.webp`, width: 4, height: 3 })
      .where(eq(screenshotRenders.id, done!));
    const view = (await getRender(ctx, o.principal, o.siteId, done!)) as { displayUrl?: string };
    expect(view).toMatchObject({ status: "done", imageUrl: `/api/media/site-media/${o.siteId}/a.webp` });
    expect(view.displayUrl).toStartWith(`/api/media/site-media/${o.siteId}/a.webp?k=`);
    await handle.db
      .update(screenshotRenders)
      .set({ status: "done", width: 4, height: 3 })
      .where(eq(screenshotRenders.id, doneNoImage!));
    expect(await getRender(ctx, o.principal, o.siteId, doneNoImage!)).not.toHaveProperty("displayUrl");
  });
});

describe("tries", () => {
  test("RENDER_TRIES is the render job's attempts in the catalog (3)", () => {
    expect(RENDER_TRIES).toBe(JOBS["render-screenshot"].attempts);
    expect(RENDER_TRIES).toBe(3);
  });

  test("beginRenderTry counts a try and sets the film stage; null once the render ended", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id] = await waiting(o, 1);
    const before = await row(id!);
    const begun = await beginRenderTry(ctx, id!);
    expect(begun).toMatchObject({ id: id!, attempts: 1, stage: "film", status: "pending" });
    expect(begun!.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
    expect((await beginRenderTry(ctx, id!))?.attempts).toBe(2);
    await handle.db.update(screenshotRenders).set({ status: "done" }).where(eq(screenshotRenders.id, id!));
    expect(await beginRenderTry(ctx, id!)).toBeNull();
    expect((await row(id!)).attempts).toBe(2);
  });

  test("setRenderStage moves a pending render's stage, and leaves an ended one alone", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id, ended] = await waiting(o, 2);
    await setRenderStage(ctx, id!, "compose");
    expect((await row(id!)).stage).toBe("compose");
    await handle.db
      .update(screenshotRenders)
      .set({ status: "failed" })
      .where(eq(screenshotRenders.id, ended!));
    await setRenderStage(ctx, ended!, "store");
    expect((await row(ended!)).stage).toBeNull();
  });

  test("releaseRenderTry hands a try back (never below zero), clears the stage, and leaves an ended render alone", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [id, ended] = await waiting(o, 2);
    await beginRenderTry(ctx, id!);
    await beginRenderTry(ctx, id!);
    await releaseRenderTry(ctx, id!);
    expect(await row(id!)).toMatchObject({ attempts: 1, stage: null, status: "pending" });
    await releaseRenderTry(ctx, id!);
    await releaseRenderTry(ctx, id!);
    expect((await row(id!)).attempts).toBe(0);
    await beginRenderTry(ctx, ended!);
    await handle.db
      .update(screenshotRenders)
      .set({ status: "failed" })
      .where(eq(screenshotRenders.id, ended!));
    await releaseRenderTry(ctx, ended!);
    expect(await row(ended!)).toMatchObject({ attempts: 1, stage: "film" });
  });
});

describe("a render's end", () => {
  test("completeRender stores the output, records screenshot.completed and admits the oldest waiting render", async () => {
    const ctx = renderCtx({ cap: 1 });
    const o = await org(ctx);
    await subscribe(o.orgId);
    const [first, second, third] = [await shoot(ctx, o), await shoot(ctx, o), await shoot(ctx, o)];
    await beginRenderTry(ctx, first);
    expect(
      await completeRender(ctx, first, {
        imageKey: `site-media/${o.siteId}/f.webp`,
        width: 1440,
        height: 900,
        warnings: ["login"],
      }),
    ).toBe(true);
    const r = await row(first);
    expect(r).toMatchObject({
      status: "done",
      stage: null,
      imageKey: `site-media/${o.siteId}/f.webp`,
      posterKey: null,
      mediaId: null,
      width: 1440,
      height: 900,
      warnings: ["login"],
      error: null,
    });
    expect(r.finishedAt).toBeInstanceOf(Date);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.completed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await ctx.queue.state("render-screenshot", second)).toBe("waiting");
    expect(await ctx.queue.state("render-screenshot", third)).toBe("missing");
    // Once ended, it is not ended again: no second event, nothing admitted.
    expect(await completeRender(ctx, first, { imageKey: "x", width: 1, height: 1, warnings: [] })).toBe(
      false,
    );
    expect(await failRender(ctx, first, "late")).toBe(false);
    expect((await row(first)).imageKey).toBe(`site-media/${o.siteId}/f.webp`);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.completed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await balance(o.orgId)).toBe(970);
  });

  test("completeRender keeps a clip's poster and media entry; a failed render's error is cleared", async () => {
    const ctx = renderCtx();
    const o = await org(ctx);
    const [clip] = await waiting(o, 1, "clip");
    await handle.db
      .update(screenshotRenders)
      .set({ error: "a try failed", stage: "store" })
      .where(eq(screenshotRenders.id, clip!));
    expect(
      await completeRender(ctx, clip!, {
        imageKey: "social/clip.mp4",
        posterKey: "social/clip.jpg",
        width: 1080,
        height: 1920,
        warnings: [],
      }),
    ).toBe(true);
    expect(await row(clip!)).toMatchObject({
      status: "done",
      stage: null,
      error: null,
      imageKey: "social/clip.mp4",
      posterKey: "social/clip.jpg",
    });
  });

  test("failRender: failed with its error (500 characters at most), refunded once, screenshot.failed, the next admitted", async () => {
    const ctx = renderCtx({ cap: 1 });
    const o = await org(ctx, 100);
    await subscribe(o.orgId);
    const [first, second] = [await shoot(ctx, o), await shoot(ctx, o)];
    await setRenderStage(ctx, first, "compose");
    const long = `${"e".repeat(499)}XYZ`;
    expect(await failRender(ctx, first, long)).toBe(true);
    const r = await row(first);
    expect(r).toMatchObject({ status: "failed", stage: null, error: `${"e".repeat(499)}X` });
    expect(r.finishedAt).toBeInstanceOf(Date);
    expect(await balance(o.orgId)).toBe(90);
    expect(await ledger(o.orgId)).toEqual([
      [-10, "screenshot_debit", first],
      [-10, "screenshot_debit", second],
      [10, "screenshot_refund", first],
    ]);
    expect(await eventsOf(o.orgId)).toEqual(["screenshot.failed"]);
    expect(await inProgress(o.orgId)).toEqual([second]);
    expect(await ctx.queue.state("render-screenshot", second)).toBe("waiting");
  });

  test("a failed clip is refunded as a clip, its amount, and records clip.failed", async () => {
    const ctx = renderCtx();
    const o = await org(ctx, 100);
    await subscribe(o.orgId);
    const { id } = await handle.db.transaction((tx) =>
      insertPendingRender(
        ctx,
        tx,
        {
          orgId: o.orgId,
          siteId: null,
          kind: "clip",
          sourceUrl: "https://example.com/clip",
          options: { clip: { durationS: 4, fps: 30, width: 1080, height: 1920 } },
          credits: 25,
        },
        "clip_debit",
      ),
    );
    expect(await failRender(ctx, id, "ffmpeg failed")).toBe(true);
    expect(await ledger(o.orgId)).toEqual([
      [-25, "clip_debit", id],
      [25, "clip_refund", id],
    ]);
    expect(await eventsOf(o.orgId)).toEqual(["clip.failed"]);
  });
});
