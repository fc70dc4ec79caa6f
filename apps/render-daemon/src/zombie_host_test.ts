import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { findBrowser } from "@site/browser";
import { html, LANDING, servePages, until } from "@site/browser/testing";
import { createLogger } from "@site/config";
import { creditLedger, organizations, screenshotRenders, socialMedia } from "@site/db";
import { findFfmpeg } from "@site/domain/screenshots";
import { createBullQueue } from "@site/queue";
import { openFsStore } from "@site/storage";
import { eq } from "drizzle-orm";
import { type DaemonProcess, spawnDaemon } from "../testing/processes.ts";
import { type RenderDaemon, startRenderDaemon } from "./daemon.ts";

// Issue 38, "a waking zombie host lists a clip twice" (decision 1440): a daemon frozen with SIGSTOP
// mid-clip (composing it), its job taken over by another host once its lock lapsed (RENDER_JOB_LOCK_MS, 2 s here
// instead of 60 real seconds), the clip finished there, and the frozen daemon woken (SIGCONT) → one
// video, one poster, one charge, the storage used exactly what is listed, no object without a row.
const redisUrl = process.env.TEST_REDIS_URL;
const SECRET = "test-secret-key-0123456789";
const LOCK_MS = 2000;
const canClip = Boolean(findBrowser(null) && findFfmpeg(null));

describe.skipIf(!redisUrl || !canClip)(
  "a daemon frozen mid-clip and woken after another host finished it",
  () => {
    const cleanup: (() => Promise<void> | void)[] = [];
    afterAll(async () => {
      for (const c of cleanup.reverse()) await c();
    });

    test("one video, one poster, one charge, quota exact, and the late host's bytes removed", async () => {
      const pages = servePages({ "/zombie": () => html(LANDING) });
      cleanup.push(() => pages.stop());
      const dataDir = mkdtempSync(join(tmpdir(), "render-zombie-"));
      cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const prefix = `zombie-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
      const log = createLogger("silent" as never);
      const env = {
        SECRET_KEY: SECRET,
        DATA_DIR: dataDir,
        FETCH_ALLOW_HOSTS: pages.host,
        RENDER_JOB_LOCK_MS: String(LOCK_MS),
        RENDER_PAGE_DEADLINE_MS: "90000",
      };
      const store = openFsStore({
        root: join(dataDir, "objects"),
        publicBaseUrl: "http://127.0.0.1:3000",
        secretKey: SECRET,
        maxPutBytes: 104857600,
      });
      const queue = createBullQueue({ redisUrl: redisUrl as string, log, prefix, lockDurationMs: LOCK_MS });
      const h: TestApp = await buildTestApp({ env, queue, store });
      cleanup.push(() => h.close());

      // Host A: a real daemon process, frozen once it is filming the clip's page.
      const a: DaemonProcess = await spawnDaemon(
        {
          ...env,
          DATABASE_URL: h.databaseUrl,
          REDIS_URL: redisUrl as string,
          QUEUE_PREFIX: prefix,
          RENDER_CONCURRENCY: "1",
        },
        { warm: false },
      );
      cleanup.push(() => a.kill());

      const o = await h.seedOrg({ credits: 100 });
      const res = await h.call("POST", "/api/v1/social/media/clips", {
        key: o.key,
        body: {
          url: pages.url("/zombie"),
          motion: "scroll",
          durationS: 2,
          fps: 24,
          width: 320,
          height: 400,
          viewportWidth: 480,
          viewportHeight: 600,
        },
      });
      expect(res.status).toBe(202);
      const { clipId } = (await res.json()) as { clipId: string };
      const clipRow = async () =>
        (await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, clipId)))[0];

      // Host B starts while A films (B's browsers launched before A freezes: the freeze stays short
      // of A's job timeout on a busy host); it takes no job while A holds the one there is.
      await until(async () => (await clipRow()).attempts > 0, 240_000);
      const b: RenderDaemon = await startRenderDaemon(runtimeOf(h), { warm: false });
      cleanup.push(() => b.stop());

      // A is frozen once it composes the clip (the page filmed; FFmpeg, in its process group, with it).
      const composing = await until(async () => {
        const r = await clipRow();
        return r.stage === "compose" || r.status !== "pending" ? r : null;
      }, 240_000);
      a.signal("SIGSTOP");
      expect([composing.status, composing.stage, composing.attempts]).toEqual(["pending", "compose", 1]);

      // B takes the job over once A's lock lapsed, films and finishes the clip.
      const done = await until(async () => {
        const r = await clipRow();
        return r.status === "pending" ? null : r;
      }, 240_000);
      expect([done.status, done.attempts, done.error]).toEqual(["done", 2, null]);
      await b.stop();

      // A wakes and goes on with the clip it no longer owns.
      a.signal("SIGCONT");
      const ended = await until(async () => {
        const out = a.output();
        if (out.includes('"clip made"')) return "listed";
        if (out.includes("render try failed") || a.child.exitCode !== null) return "failed";
        return null;
      }, 240_000).catch((err) => {
        console.log("the woken daemon:", a.output().slice(-6000));
        throw err;
      });
      // A woken try that timed out (its 120 s job timeout counts the freeze) never reaches the listing:
      // nothing would be shown then, so say so rather than pass.
      if (ended !== "listed") console.log("the woken daemon:", a.output().slice(-3000));
      expect(ended).toBe("listed");
      await Bun.sleep(200);

      const listed = await h.db.select().from(socialMedia).where(eq(socialMedia.orgId, o.org.id));
      expect(listed.map((m) => m.kind).sort()).toEqual(["image", "video"]);
      const after = await clipRow();
      expect([after.status, after.attempts, after.mediaId]).toEqual([
        "done",
        2,
        listed.find((m) => m.kind === "video")?.id ?? null,
      ]);
      const [org] = await h.db.select().from(organizations).where(eq(organizations.id, o.org.id));
      expect(org.storageUsedBytes).toBe(listed.reduce((n, m) => n + m.size, 0));
      expect(org.credits).toBe(100 - h.ctx.config.clipCredits);
      const ledger = await h.db.select().from(creditLedger).where(eq(creditLedger.orgId, o.org.id));
      expect(ledger.filter((l) => l.reason !== "grant").map((l) => l.reason)).toEqual(["clip_debit"]);
      // What the late host stored is removed: every object of the organization has its row.
      const objects: string[] = [];
      for await (const obj of store.list(`social-media/${o.org.id}/`)) objects.push(obj.key);
      expect(objects.sort()).toEqual(listed.map((m) => m.key).sort());
    }, 600_000);
  },
);
