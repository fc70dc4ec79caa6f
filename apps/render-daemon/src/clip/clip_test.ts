import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadImage } from "@napi-rs/canvas";
import { buildTestApp, runtimeOf, type TestApp } from "@site/api/testing";
import { html, servePages, until } from "@site/browser/testing";
import { creditLedger, organizations, screenshotRenders, socialMedia } from "@site/db";
import { findFfmpeg } from "@site/domain/screenshots";
import { and, eq } from "drizzle-orm";
import { type RenderDaemon, startRenderDaemon } from "../daemon.ts";
import { ffprobe, frameOf, meanDifference, topLevelBoxes, withTempFile } from "./probe.ts";

// A page four screens tall: coloured bands with large text, so that scrolling changes every frame.
const TALL = `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:48px/1.2 sans-serif}section{height:450px;display:flex;align-items:center;padding:0 64px;color:#fff}
</style></head><body>${[
  "#5b5bf7",
  "#22c1a4",
  "#f59e0b",
  "#ef4444",
  "#0ea5e9",
  "#111827",
  "#a855f7",
  "#16a34a",
]
  .map((c, i) => `<section style="background:${c}"><h2>Section ${i + 1}: clips scroll</h2></section>`)
  .join("")}</body></html>`;

const pages = servePages({ "/tall": () => html(TALL) });
// An allowed address where nothing listens: a page that cannot be reached.
const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
const deadHost = `127.0.0.1:${closed.port}`;
closed.stop(true);
let h: TestApp;
let daemon: RenderDaemon;

beforeAll(async () => {
  h = await buildTestApp({
    env: { FETCH_ALLOW_HOSTS: `${pages.host},${deadHost}`, RENDER_CONCURRENCY: "2" },
  });
  daemon = await startRenderDaemon(runtimeOf(h), { warm: false });
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  await h?.close();
  pages.stop();
});

type Clip = {
  clipId: string;
  status: string;
  media: { id: string; kind: string; url: string; width: number; height: number; contentType: string } | null;
  posterUrl: string | null;
  durationS: number;
  fps: number;
  width: number;
  height: number;
  warnings: string[];
  error: string | null;
};

async function clipOf(key: string, body: Record<string, unknown>): Promise<Clip> {
  const res = await h.call("POST", "/api/v1/social/media/clips", { key, body });
  expect(res.status).toBe(202);
  const { clipId } = (await res.json()) as { clipId: string };
  return until(async () => {
    const poll = await h.call("GET", `/api/v1/social/media/clips/${clipId}`, { key });
    const c = (await poll.json()) as Clip;
    return c.status === "pending" ? null : c;
  }, 240_000);
}

const creditsOf = async (orgId: string) =>
  (await h.db.select({ c: organizations.credits }).from(organizations).where(eq(organizations.id, orgId)))[0]
    .c;

async function bytesOf(key: string): Promise<Uint8Array> {
  const got = await h.ctx.store.get(key);
  return new Uint8Array(await new Response(got!.body).arrayBuffer());
}

const keyOfUrl = (url: string) => decodeURIComponent(url.replace(/^\/api\/media\//, "").split("?")[0]);

describe.skipIf(!findFfmpeg(null))(
  "device clips end to end (API → queue → Chromium → FFmpeg → social library)",
  () => {
    test("a scroll clip is an H.264 MP4 (yuv420p, faststart) of exact duration and frame rate, its motion real", async () => {
      const org = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
      const c = await clipOf(org.key, {
        url: pages.url("/tall"),
        motion: "scroll",
        durationS: 2,
        fps: 24,
        width: 540,
        height: 676,
      });
      expect(c).toMatchObject({
        status: "done",
        error: null,
        durationS: 2,
        fps: 24,
        width: 540,
        height: 676,
      });
      expect(c.media).toMatchObject({ kind: "video", contentType: "video/mp4", width: 540, height: 676 });
      expect(await creditsOf(org.org.id)).toBe(70);
      // listed in the social media library as a video, the poster not listed
      const list = await h.call("GET", "/api/v1/social/media", { key: org.key });
      const listed = ((await list.json()) as { media: { id: string; kind: string }[] }).media;
      expect(listed).toEqual([expect.objectContaining({ id: c.media!.id, kind: "video" })]);

      const video = await bytesOf(keyOfUrl(c.media!.url));
      // faststart: the index (moov) comes before the media data (mdat), read from the file's own boxes
      const boxes = topLevelBoxes(video).map((b) => b.type);
      expect(boxes[0]).toBe("ftyp");
      expect(boxes.indexOf("moov")).toBeGreaterThan(0);
      expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));
      await withTempFile(video, "clip.mp4", async (file) => {
        const probe = await ffprobe(file);
        expect(probe.format.format_name).toContain("mp4");
        expect(probe.streams.map((s) => s.codec_type)).toEqual(["video"]); // no audio track
        const v = probe.streams[0];
        expect(v).toMatchObject({ codec_name: "h264", pix_fmt: "yuv420p", width: 540, height: 676 });
        expect(["High", "Main"]).toContain(v.profile as string);
        expect(v.r_frame_rate).toBe("24/1");
        expect(v.avg_frame_rate).toBe("24/1");
        expect(Number(v.nb_read_frames)).toBe(48);
        expect(Number(v.duration)).toBeCloseTo(2, 3);
        expect(Number(probe.format.duration)).toBeCloseTo(2, 2);
        // frames at 10 % and 90 % differ: the page scrolled
        const early = await frameOf(file, Math.round(48 * 0.1), 540, 676);
        const late = await frameOf(file, Math.round(48 * 0.9), 540, 676);
        expect(meanDifference(early, late)).toBeGreaterThan(5);
      });
      // the poster is the first frame, as a JPEG of the clip's size, served to members
      expect(c.posterUrl).toContain("k=");
      const [row] = await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, c.clipId));
      const poster = await bytesOf(row.posterKey!);
      expect([poster[0], poster[1]]).toEqual([0xff, 0xd8]);
      const img = await loadImage(Buffer.from(poster));
      expect([img.width, img.height]).toEqual([540, 676]);
      const served = await h.call("GET", c.posterUrl!.replace(/^https?:\/\/[^/]+/, ""));
      expect(served.status).toBe(200);
    }, 240_000);

    test("an orbit clip turns the device: its plates differ along the clip, and the clip is done", async () => {
      const org = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
      const c = await clipOf(org.key, {
        url: pages.url("/tall"),
        motion: "orbit",
        styleId: "phone-hero",
        durationS: 2,
        fps: 24,
        width: 400,
        height: 500,
      });
      expect(c).toMatchObject({ status: "done", error: null });
      const video = await bytesOf(keyOfUrl(c.media!.url));
      await withTempFile(video, "orbit.mp4", async (file) => {
        const first = await frameOf(file, 0, 400, 500);
        const last = await frameOf(file, 47, 400, 500);
        // the device's silhouette moved: the backdrop's left and right thirds changed, not only the screen
        expect(meanDifference(first, last)).toBeGreaterThan(3);
      });
    }, 300_000);

    test("an unreachable page fails the clip and refunds its credits exactly once", async () => {
      const org = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
      const res = await h.call("POST", "/api/v1/social/media/clips", {
        key: org.key,
        body: { url: `http://${deadHost}/gone`, motion: "scroll", durationS: 2 },
      });
      expect(res.status).toBe(202);
      const { clipId } = (await res.json()) as { clipId: string };
      const c = await until(async () => {
        const poll = await h.call("GET", `/api/v1/social/media/clips/${clipId}`, { key: org.key });
        const v = (await poll.json()) as Clip;
        return v.status === "pending" ? null : v;
      }, 240_000);
      expect(c.status).toBe("failed");
      expect(c.error).toBeString();
      expect(String(c.error).length).toBeGreaterThan(0);
      expect(c.media).toBeNull();
      expect(await creditsOf(org.org.id)).toBe(100);
      const ledger = await h.db
        .select()
        .from(creditLedger)
        .where(and(eq(creditLedger.subjectId, clipId), eq(creditLedger.orgId, org.org.id)));
      expect(ledger.map((l) => [l.reason, l.delta]).sort()).toEqual([
        ["clip_debit", -30],
        ["clip_refund", 30],
      ]);
      const media = await h.db.select().from(socialMedia).where(eq(socialMedia.orgId, org.org.id));
      expect(media).toEqual([]);
    }, 300_000);
  },
);
