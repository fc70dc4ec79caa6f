import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "@site/config";
import { resolveStyle } from "@site/domain/screenshots";
import type { HTTPRequest, Page } from "puppeteer-core";
import { type LaunchedBrowser, launchChromium } from "@site/browser";
import { drawChromeBar } from "../frame/browser_chrome.ts";
import type { Capture, Composed, Look } from "../render_types.ts";
import { PermanentJobError } from "@site/queue";
import type { ComposeJob, ComposeResult } from "./scene/main_browser.ts";

const ORIGIN = "http://compositor.local";
const SCENE_DIR = join(dirname(fileURLToPath(import.meta.url)), "scene");
const THREE_BUILD = dirname(fileURLToPath(import.meta.resolve("three")));
const THREE_ADDONS = normalize(join(THREE_BUILD, "..", "examples", "jsm"));

const INDEX_HTML = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{"imports":{"three":"/three.module.js","three/addons/":"/addons/"}}</script>
<style>html,body{margin:0;background:#000}canvas{display:block}</style></head>
<body><script type="module" src="/scene/main_browser.ts"></script></body></html>`;

/** Frames captures in device mockups on one warm WebGL page; calls are serialized. */
export type Compositor = { compose(c: Capture, look: Look): Promise<Composed>; close(): Promise<void> };

/** The output frame for a capture: as wide as the capture (1024 to 3840 px), 16:10. */
export function frameSize(capture: { width: number }): { width: number; height: number } {
  const width = Math.max(1024, Math.min(3840, Math.round(capture.width)));
  return { width, height: Math.round(width * 0.625) };
}

/** The chrome's device-pixel scale for a capture width (1440 CSS px reads as scale 1). */
export function chromeScale(captureWidth: number): number {
  return Math.max(0.75, Math.min(3, captureWidth / 1440));
}

const transpiler = new Bun.Transpiler({ loader: "ts", target: "browser" });
const scripts = new Map<string, string>();
function sceneScript(name: string): string | null {
  if (!/^[a-z_]+\.ts$/.test(name)) return null;
  let js = scripts.get(name);
  if (js === undefined) {
    js = transpiler.transformSync(readFileSync(join(SCENE_DIR, name), "utf8"));
    scripts.set(name, js);
  }
  return js;
}

function staticFile(path: string): { body: Uint8Array | string; type: string } | null {
  if (path === "/" || path === "/index.html") return { body: INDEX_HTML, type: "text/html" };
  if (path === "/three.module.js" || path === "/three.core.js")
    return { body: readFileSync(join(THREE_BUILD, path.slice(1))), type: "text/javascript" };
  if (path.startsWith("/addons/")) {
    const file = normalize(join(THREE_ADDONS, path.slice("/addons/".length)));
    if (!file.startsWith(THREE_ADDONS) || !file.endsWith(".js")) return null;
    return { body: readFileSync(file), type: "text/javascript" };
  }
  if (path.startsWith("/scene/")) {
    const js = sceneScript(path.slice("/scene/".length));
    return js === null ? null : { body: js, type: "text/javascript" };
  }
  return null;
}

/**
 * Starts the compositor: its own Chromium with a warm three.js page (WebGL; SwiftShader unless `gpu`).
 * Resolves at once; the page warms in the background and `compose` waits for it.
 */
export async function createCompositor(opts: {
  executablePath: string;
  gpu: boolean;
  log: Logger;
}): Promise<Compositor> {
  const blobs = new Map<string, Uint8Array>();
  const chromeBars = new Map<string, { url: string; height: number }>();
  let launched: LaunchedBrowser | null = null;
  let page: Page | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let seq = 0;

  const keep = (path: string, bytes: Uint8Array) => {
    blobs.set(path, bytes);
    while (blobs.size > 8) blobs.delete(blobs.keys().next().value as string);
  };

  const serve = (req: HTTPRequest) => {
    const url = new URL(req.url());
    if (url.origin !== ORIGIN) return req.abort("blockedbyclient");
    if (url.pathname === "/favicon.ico") return req.respond({ status: 204, body: "" });
    const blob = blobs.get(url.pathname);
    if (blob) return req.respond({ status: 200, contentType: "image/png", body: Buffer.from(blob) });
    try {
      const file = staticFile(url.pathname);
      if (file) return req.respond({ status: 200, contentType: file.type, body: file.body });
    } catch {}
    return req.respond({ status: 404, contentType: "text/plain", body: "not found" });
  };

  const open = async (): Promise<Page> => {
    if (page && !page.isClosed() && launched?.browser.connected) return page;
    await launched?.close();
    // Its page is served entirely by request interception: the egress proxy allows it nothing at all.
    launched = await launchChromium(opts.executablePath, { gpu: opts.gpu, allowHosts: [], log: opts.log });
    const p = await launched.browser.newPage();
    const errors: string[] = [];
    p.on("pageerror", (e) => errors.push(e instanceof Error ? e.message : String(e)));
    p.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warn")
        opts.log.warn("compositor console", { text: m.text().slice(0, 500) });
    });
    await p.setRequestInterception(true);
    p.on("request", (req) => {
      serve(req)?.catch(() => {});
    });
    await p.goto(`${ORIGIN}/index.html`, { waitUntil: "load" });
    try {
      await p.waitForFunction("window.__composeReady === true", { timeout: 30_000, polling: 50 });
    } catch {
      throw new Error(`compositor page did not start: ${errors.join("; ") || "timeout"}`);
    }
    const info = await p.evaluate("window.__compose.info()");
    opts.log.info("compositor ready", { webgl: info });
    page = p;
    return p;
  };

  const captureIds = new WeakMap<Uint8Array, string>();
  const captureUrl = (c: Capture) => {
    let id = captureIds.get(c.png);
    if (!id) {
      id = `${Bun.hash(c.png).toString(36)}-${c.png.byteLength}`;
      captureIds.set(c.png, id);
    }
    const path = `/capture/${id}.png`;
    if (!blobs.has(path)) keep(path, c.png);
    return `${ORIGIN}${path}`;
  };

  const chromeFor = async (c: Capture, theme: "light" | "dark", host: string) => {
    const k = `${c.width}|${theme}|${host}`;
    const hit = chromeBars.get(k);
    if (hit && blobs.has(new URL(hit.url).pathname)) return hit;
    const bar = await drawChromeBar({ width: c.width, scale: chromeScale(c.width), theme, host });
    const path = `/chrome/${++seq}.png`;
    keep(path, bar.png);
    const out = { url: `${ORIGIN}${path}`, height: bar.height };
    chromeBars.set(k, out);
    while (chromeBars.size > 8) chromeBars.delete(chromeBars.keys().next().value as string);
    return out;
  };

  const run = async (c: Capture, look: Look): Promise<Composed> => {
    const style = resolveStyle(look.styleId);
    // Cannot succeed however often it is retried.
    if (!style) throw new PermanentJobError(`unknown screenshot style "${look.styleId}"`);
    const chrome = look.chrome ?? (style.look.device === "window" ? look.theme : "none");
    const bar = chrome === "none" ? null : await chromeFor(c, chrome, look.host);
    const size = frameSize(c);
    const job: ComposeJob = {
      captureUrl: captureUrl(c),
      chromeUrl: bar?.url ?? null,
      chromeHeight: bar?.height ?? 0,
      width: size.width,
      height: size.height,
      look: style.look,
      theme: look.theme,
      framing: Math.max(0.4, Math.min(3, look.framing ?? 1)),
      mime: "image/webp",
      quality: 0.9,
    };
    const p = await open();
    const out = (await p.evaluate((j) => (window as any).__compose.render(j), job)) as ComposeResult;
    opts.log.debug("composed", { style: style.id, width: out.width, height: out.height, ...out.timings });
    const comma = out.dataUrl.indexOf(",");
    const contentType = out.dataUrl.slice(5, out.dataUrl.indexOf(";"));
    return {
      bytes: new Uint8Array(Buffer.from(out.dataUrl.slice(comma + 1), "base64")),
      width: out.width,
      height: out.height,
      contentType,
    };
  };

  // Warmed in the background: the daemon takes jobs at once and films while the compositor's WebGL page
  // starts (26 s on a busy 2-core host, where a daemon restarted after a crash left its renders waiting
  // that long: decision 0902). The first frame waits for it through the queue; a failed start is logged
  // and tried again by that frame.
  queue = open().catch((err) =>
    opts.log.warn("compositor did not start; it is started again for the next frame", { cause: err }),
  );
  return {
    compose(c, look) {
      const next = queue.then(() =>
        run(c, look).catch(async (err) => {
          // a crashed or wedged compositor page is replaced on the next call
          if (!(err instanceof PermanentJobError)) {
            const dead = launched;
            launched = null;
            page = null;
            await dead?.close().catch(() => {});
          }
          throw err;
        }),
      );
      queue = next.catch(() => {});
      return next;
    },
    async close() {
      await queue;
      await launched?.close();
      launched = null;
      page = null;
    },
  };
}
