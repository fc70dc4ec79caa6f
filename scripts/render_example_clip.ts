/**
 * Renders the README's example device clip (and its poster) into docs/screenshots through the API and a
 * render daemon (real Chromium and FFmpeg), from a local demo page: small (540×676, 4 s, 24 fps).
 *   bun scripts/render_example_clip.ts
 */
import { writeFileSync } from "node:fs";
import { buildTestApp, runtimeOf } from "@site/api/testing";
import { html, servePages, until } from "@site/browser/testing";
import { screenshotRenders } from "@site/db";
import { startRenderDaemon } from "@site/render-daemon";
import { eq } from "drizzle-orm";

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:18px/1.5 system-ui,sans-serif;color:#111;background:#f6f7fb}header{padding:20px 24px;font-weight:700}
section{padding:48px 24px}h2{font-size:34px;margin:0 0 10px}.cta{display:inline-block;padding:12px 22px;border-radius:10px;background:#5b5bf7;color:#fff}
</style></head><body><header>Lumen</header>${[
  "Ship pages that glow.",
  "Analytics for teams.",
  "Private by design.",
  "Fast everywhere.",
  "Start free today.",
]
  .map(
    (t, i) =>
      `<section style="background:hsl(${230 + i * 30} 80% ${i % 2 ? 96 : 91}%)"><h2>${t}</h2><p>Every pixel of your product page, measured and understood.</p><a class="cta">Try Lumen</a></section>`,
  )
  .join("")}</body></html>`;

const pages = servePages({ "/": () => html(PAGE) });
const h = await buildTestApp({ env: { FETCH_ALLOW_HOSTS: pages.host } });
const daemon = await startRenderDaemon(runtimeOf(h), { warm: false });
try {
  const org = await h.seedOrg({ credits: 100, scopes: ["social:write"] });
  const res = await h.call("POST", "/api/v1/social/media/clips", {
    key: org.key,
    body: {
      url: pages.url("/"),
      styleId: "phone-hero",
      motion: "orbit",
      durationS: 4,
      fps: 24,
      width: 540,
      height: 676,
    },
  });
  const { clipId } = (await res.json()) as { clipId: string };
  await until(async () => {
    const r = await h.call("GET", `/api/v1/social/media/clips/${clipId}`, { key: org.key });
    const v = (await r.json()) as { status: string; error: string | null };
    if (v.status === "failed") throw new Error(v.error ?? "failed");
    return v.status === "done";
  }, 600_000);
  const [row] = await h.db.select().from(screenshotRenders).where(eq(screenshotRenders.id, clipId));
  for (const [key, out] of [
    [row.imageKey, "docs/screenshots/clip-phone-orbit.mp4"],
    [row.posterKey, "docs/screenshots/clip-phone-orbit.jpg"],
  ] as const) {
    const got = await h.ctx.store.get(key as string);
    const bytes = new Uint8Array(await new Response(got!.body).arrayBuffer());
    writeFileSync(out, bytes);
    console.log(`${out}: ${bytes.byteLength} bytes`);
  }
} finally {
  await daemon.stop();
  await h.close();
  pages.stop();
}
