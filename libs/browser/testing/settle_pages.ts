import { readFileSync } from "node:fs";
import { createCanvas } from "@napi-rs/canvas";
import { html, servePages } from "./pages.ts";

/** The colour every settling fixture paints what must be in the capture: easy to count. */
export const FIXTURE_MAGENTA: [number, number, number] = [255, 0, 255];

const FONT_FILE = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf";

const page = (body: string, head = "") =>
  html(
    `<!doctype html><html><head><meta charset="utf-8">${head}<style>body{margin:0;font:16px sans-serif;background:#fff}</style></head><body>${body}</body></html>`,
  );

/**
 * Pages for settling tests, on 127.0.0.1:
 * - `/static`: nothing to wait for; a magenta block at the top.
 * - `/late`: fetches its content 300 ms after load (the answer takes 200 ms more): a magenta block.
 * - `/lazy`: a lazy image 3000 px below the fold (its bytes take 300 ms): a magenta 400×300 picture.
 * - `/fonts`: a 120 px heading in a web font that takes 600 ms and blocks text until it arrives.
 * - `/clock`: a clock ticking every 50 ms (never quiet) beside a static magenta block.
 * - `/fade`: a magenta block fading in over 600 ms from load (a CSS animation: no DOM change).
 * - `/after-load`: a grey block painted magenta 60 ms after load by animation frames (no timer, no
 *   request: only the quiet window sees it coming).
 * - `/selector`: `#late-box` (magenta) appears 5 s after load; `.promo` (green) and `#ad-slot`
 *   (blue) are there to hide.
 * - `/consent`: a cyan cookie bar of a consent manager autoconsent knows (WP Cookie Notice for GDPR);
 *   its reject button removes it.
 * - `/ads`: a page that loads a script from an advertising host (ad.doubleclick.net).
 * - `/fonts-missing`: text in a family no host has, with a serif fallback; an emoji; a CJK line; and a
 *   system-UI stack (never reported).
 * `hits` counts requests per path.
 */
export function serveSettlePages() {
  const png = (() => {
    const c = createCanvas(400, 300);
    const g = c.getContext("2d");
    g.fillStyle = "#ff00ff";
    g.fillRect(0, 0, 400, 300);
    return c.toBuffer("image/png");
  })();
  const block = (h = 200, id = "") =>
    `<div ${id ? `id="${id}"` : ""} style="height:${h}px;background:#ff00ff"></div>`;
  return servePages({
    "/static": () => page(`${block()}<h1>Static</h1>`),
    "/late": () =>
      page(
        `<h1>Late</h1><div id="slot"></div><script>setTimeout(() => fetch("/late/data").then((r) => r.text()).then((t) => { document.getElementById("slot").innerHTML = t; }), 300);</script>`,
      ),
    "/late/data": async () => {
      await Bun.sleep(200);
      return new Response(block(300), { headers: { "content-type": "text/html" } });
    },
    "/lazy": () =>
      page(
        `<h1>Lazy</h1><div style="height:3000px"></div><img loading="lazy" src="/lazy/picture.png" width="400" height="300" style="display:block"><p>end</p>`,
      ),
    "/lazy/picture.png": async () => {
      await Bun.sleep(300);
      return new Response(new Uint8Array(png), { headers: { "content-type": "image/png" } });
    },
    "/fonts": () =>
      page(
        `<h1 style="font:120px FixtureFont;color:#000;margin:40px">Settled</h1>`,
        `<style>@font-face{font-family:FixtureFont;src:url(/fonts/fixture.ttf) format("truetype");font-display:block}</style>`,
      ),
    "/fonts/fixture.ttf": async () => {
      await Bun.sleep(600);
      return new Response(readFileSync(FONT_FILE), { headers: { "content-type": "font/ttf" } });
    },
    "/clock": () =>
      page(
        `${block()}<h1 id="clock">0</h1><script>let n = 0; setInterval(() => { document.getElementById("clock").textContent = String(++n); }, 50);</script>`,
      ),
    "/fade": () =>
      page(
        `<style>@keyframes in{from{opacity:0}to{opacity:1}}#fade{animation:in 600ms linear}</style>${block(200, "fade")}<h1>Fade</h1>`,
      ),
    "/after-load": () =>
      page(
        `<div id="later" style="height:200px;background:#808080"></div><h1>After load</h1><script>addEventListener("load", () => { const t0 = performance.now(); const step = () => { if (performance.now() - t0 < 60) requestAnimationFrame(step); else document.getElementById("later").style.background = "#ff00ff"; }; requestAnimationFrame(step); });</script>`,
      ),
    "/consent": () =>
      page(
        `<h1>Consent</h1><div id="gdpr-cookie-consent-bar" style="position:fixed;left:0;right:0;bottom:0;height:200px;background:#00ffff">We use cookies <button id="cookie_action_accept" onclick="document.cookie='wpl_viewed_cookie=yes';this.parentElement.remove()">Accept</button><button id="cookie_action_reject" onclick="document.cookie='wpl_viewed_cookie=no';this.parentElement.remove()">Reject</button></div>`,
      ),
    "/ads": () => page(`<h1>Ads</h1><script src="http://ad.doubleclick.net/ddm/ad.js"></script>${block()}`),
    "/fonts-missing": () =>
      page(
        `<h1 style="font-family:'Quixotic Nonexistent Grotesk', serif">Missing</h1><p style="font-family:-apple-system, 'Segoe UI', Roboto, sans-serif">System UI</p><p style="font-size:64px">🚀</p><p>漢字かな</p>`,
      ),
    "/selector": () =>
      page(
        `<h1>Selector</h1><div class="promo" style="height:150px;background:#00ff00"></div><div id="ad-slot" style="height:150px;background:#0000ff"></div><div id="late"></div><script>setTimeout(() => { document.getElementById("late").innerHTML = '${block(200, "late-box")}'; }, 5000);</script>`,
      ),
  });
}
