import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { type Image, loadImage } from "@napi-rs/canvas";
import { type LaunchedBrowser, launchChromium } from "@site/browser";
import type { Logger } from "@site/config";
import { resolveStyle, type ScreenshotStyle } from "@site/domain/screenshots";
import { PermanentJobError } from "@site/queue";
import type { ObjectStore } from "@site/storage";
import IORedis from "ioredis";
import type { HTTPRequest, Page } from "puppeteer-core";
import { drawChromeBar } from "../frame/browser_chrome.ts";
import type { Capture, Composed, Look } from "../render_types.ts";
import { createPlateCache, fromPacked, type PlateCache } from "./plate_cache.ts";
import type { ComposeJob, ComposeResult, PlateResult } from "./scene/main_browser.ts";
import { SCREENS, WINDOW_SCREEN } from "./scene/screens.ts";
import {
  type DecodedCapture,
  decodeCapture,
  encodeFrame,
  frameBuffer,
  type Pixels,
  type PlatePixels,
  screenExtent,
  screenImage,
  warpComposite,
} from "./warp.ts";

const ORIGIN = "http://compositor.local";
const SCENE_DIR = join(dirname(fileURLToPath(import.meta.url)), "scene");
const THREE_BUILD = dirname(fileURLToPath(import.meta.resolve("three")));
const THREE_ADDONS = normalize(join(THREE_BUILD, "..", "examples", "jsm"));

const INDEX_HTML = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{"imports":{"three":"/three.module.js","three/addons/":"/addons/"}}</script>
<style>html,body{margin:0;background:#000}canvas{display:block}</style></head>
<body><script type="module" src="/scene/main_browser.ts"></script></body></html>`;

/** How often paused warming looks again whether renders are still in flight. */
const WARM_YIELD_POLL_MS = 50;

/** JPEG quality of composed frames (0: libjpeg-turbo encodes a 1440×900 frame in about 20 ms). */
export const FRAME_QUALITY = 90;

/**
 * Frames captures in device mockups. `compose` is the fast path: the look's plate (rendered once by
 * the warm WebGL page, cached in memory and the object store) plus a projective warp of the capture,
 * on the CPU. `reference` is the full 3D render of the same frame, kept as the standard the fast path
 * is measured against. Page calls are serialized.
 */
export type Compositor = {
  compose(c: Capture, look: Look): Promise<Composed>;
  /** The fast path's frame as raw RGBA, with the plate it used (tests compare it with `reference`). */
  composePixels(c: Capture, look: Look): Promise<{ pixels: Pixels; plate: PlatePixels }>;
  /** The full 3D render (three.js draws the capture as the screen's texture), raw RGBA. */
  reference(c: Capture, look: Look): Promise<Pixels>;
  /** The plate key of a look and a function that draws its plate on the page (no cache): tests share it. */
  plateJob(c: Capture, look: Look): Promise<{ key: string; draw: () => Promise<PlatePixels> }>;
  /**
   * A clip's scene: the plate of each pose at the output size (cached and shared like stills' plates),
   * and the tall capture drawn once at the size the screen shows it. `windowHeight`: the capture rows
   * the screen shows at once (the viewport's height in device pixels), which sets a browser window's
   * screen aspect as for a still of that viewport.
   */
  clipScene(
    c: Capture,
    look: Look,
    opts: { width: number; height: number; windowHeight: number; poses: ClipPose[]; framing?: number },
  ): Promise<ClipScene>;
  /**
   * Builds (or loads) the plates of these looks ahead of the first render that needs them, one at a
   * time; before each, waits while `opts.busy()` says renders are in flight, so warming yields to them
   * (decision 1505). A plate a render needs meanwhile is built by that render.
   */
  warm(looks: WarmLook[], opts?: { busy?: () => boolean }): Promise<void>;
  plates: PlateCache;
  close(): Promise<void>;
};

/** A clip's pose at one instant, degrees: the device's turn and the camera's move (scene main_browser.ts). */
export type ClipPose = { yaw: number; azimuth: number; elevation: number };

/** What a clip's frames are drawn from: a plate per pose, and the screen's content as one tall strip. */
export type ClipScene = {
  /** The plates, one per pose asked for, in order. */
  plates: PlatePixels[];
  /** Header (status bar or chrome bar, fixed) then the whole capture, at the screen's size in the frame. */
  strip: Pixels;
  /** Rows of the strip's fixed header. */
  header: number;
  /** The screen's window through the strip: its width and height in strip pixels. */
  window: { width: number; height: number };
};

/** A look to warm: the capture size it will frame (the default viewport's is 1440×900). */
export type WarmLook = {
  styleId: string;
  theme: "light" | "dark";
  captureWidth: number;
  captureHeight: number;
  chrome?: Look["chrome"];
};

const SCENE_FILES = ["main_browser.ts", "devices_browser.ts", "screens.ts", "status_bar.ts"];
/** Changes whenever the scene's code or three.js does, so plates drawn by older code are not reused. */
const SCENE_VERSION = (() => {
  const h = createHash("sha256");
  h.update("plate-v1");
  for (const f of SCENE_FILES) h.update(readFileSync(join(SCENE_DIR, f)));
  h.update(readFileSync(join(THREE_BUILD, "three.core.js")).subarray(0, 4096));
  return h.digest("hex").slice(0, 16);
})();

/** The screen's height/width: the device's, or for the browser window the content's (2 % steps). */
export function screenAspect(
  style: ScreenshotStyle,
  capture: { width: number; height: number },
  chromeHeight: number,
): number {
  const device = style.look.device;
  if (device !== "window") return SCREENS[device].height / SCREENS[device].width;
  const ratio = (capture.height + chromeHeight) / capture.width;
  const clamped = Math.min(WINDOW_SCREEN.maxAspect, Math.max(WINDOW_SCREEN.minAspect, ratio));
  return Math.round(clamped * 50) / 50;
}

/**
 * The plate's cache key: what the plate depends on and nothing else (not the page, not the chrome bar,
 * which is part of the screen's content): the style's definition (so editing a style draws new plates),
 * theme, framing, frame size, screen aspect, and the scene code's version.
 */
export function plateKey(p: {
  style: ScreenshotStyle;
  theme: "light" | "dark";
  framing: number;
  width: number;
  height: number;
  aspect: number;
  /** A clip's pose (decision 1221); stills have none. */
  motion?: ClipPose;
}): string {
  const parts: unknown[] = [
    SCENE_VERSION,
    p.style.look,
    p.theme,
    p.framing,
    p.width,
    p.height,
    p.aspect.toFixed(4),
  ];
  if (p.motion) parts.push(["motion", p.motion.yaw, p.motion.azimuth, p.motion.elevation]);
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 40);
}

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
  /** Where plates are shared between daemons; none keeps them in memory only. */
  store?: ObjectStore | null;
  /** Redis for the plate build lock (one build across daemons); none: this process alone. */
  redisUrl?: string | null;
  redisPrefix?: string;
  plateCacheBytes?: number;
}): Promise<Compositor> {
  const redis = opts.redisUrl
    ? new IORedis(opts.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 3000, lazyConnect: true })
    : null;
  redis?.on("error", (err) => opts.log.warn("plate lock redis error", { cause: String(err) }));
  const plates = createPlateCache({
    store: opts.store,
    redis,
    prefix: opts.redisPrefix ? `${opts.redisPrefix}:` : "",
    log: opts.log,
    maxBytes: opts.plateCacheBytes,
  });
  const blobs = new Map<string, Uint8Array>();
  const chromeBars = new Map<string, { url: string; height: number }>();
  let launched: LaunchedBrowser | null = null;
  let page: Page | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let seq = 0;
  let closing = false;

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
    if (closing) throw new Error("the compositor is closed");
    // Its page is served entirely by request interception: the egress proxy allows it nothing at all.
    launched = await launchChromium(opts.executablePath, { gpu: opts.gpu, allowHosts: [], log: opts.log });
    if (closing) {
      await launched.close();
      launched = null;
      throw new Error("the compositor is closed");
    }
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
    // three.js (≈ 2.5 MB) is parsed and the environment map drawn on the CPU: slow on a busy host
    await p.goto(`${ORIGIN}/index.html`, { waitUntil: "load", timeout: 120_000 });
    try {
      await p.waitForFunction("window.__composeReady === true", { timeout: 120_000, polling: 50 });
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

  /** The look resolved: style, chrome, frame size, screen aspect, plate key. */
  const resolve = async (c: Capture, look: Look) => {
    const style = resolveStyle(look.styleId);
    // Cannot succeed however often it is retried.
    if (!style) throw new PermanentJobError(`unknown screenshot style "${look.styleId}"`);
    const chrome = look.chrome ?? (style.look.device === "window" ? look.theme : "none");
    const bar = chrome === "none" ? null : await chromeFor(c, chrome, look.host);
    const size = frameSize(c);
    const framing = Math.max(0.4, Math.min(3, look.framing ?? 1));
    const aspect = screenAspect(style, c, bar?.height ?? 0);
    const job: ComposeJob = {
      captureUrl: "",
      chromeUrl: bar?.url ?? null,
      chromeHeight: bar?.height ?? 0,
      width: size.width,
      height: size.height,
      aspect,
      look: style.look,
      theme: look.theme,
      framing,
      mime: "image/webp",
      quality: 0.9,
    };
    const key = plateKey({
      style,
      theme: look.theme,
      framing,
      width: size.width,
      height: size.height,
      aspect,
    });
    return { style, bar, job, key };
  };

  /** Runs `work` on the compositor page, one call at a time; a failed page is replaced next time. */
  const onPage = <T>(work: (p: Page) => Promise<T>): Promise<T> => {
    const next = queue.then(async () => {
      try {
        return await work(await open());
      } catch (err) {
        if (!(err instanceof PermanentJobError)) {
          const dead = launched;
          launched = null;
          page = null;
          await dead?.close().catch(() => {});
        }
        throw err;
      }
    });
    queue = next.catch(() => {});
    return next;
  };

  const buildPlate = (job: ComposeJob): Promise<PlatePixels> =>
    onPage(async (p) => {
      const out = (await p.evaluate((j) => (window as any).__compose.plate(j), job)) as PlateResult;
      opts.log.debug("plate drawn", { width: out.width, height: out.height, ...out.timings });
      return fromPacked(new Uint8Array(Buffer.from(out.rgba, "base64")), out.width, out.height, out.corners);
    });

  const plateFor = (job: ComposeJob, key: string) => plates.get(key, () => buildPlate(job));

  const decoded = new Map<string, Promise<DecodedCapture>>();
  const decodedCapture = (c: Capture): Promise<DecodedCapture> => {
    const id = `${Bun.hash(c.png).toString(36)}-${c.png.byteLength}`;
    let hit = decoded.get(id);
    if (hit) decoded.delete(id);
    else {
      hit = decodeCapture(c.png);
      hit.catch(() => decoded.delete(id));
    }
    decoded.set(id, hit);
    while (decoded.size > 4) decoded.delete(decoded.keys().next().value as string);
    return hit;
  };
  const barImages = new Map<string, Promise<Image>>();
  const barImage = (url: string): Promise<Image> => {
    let hit = barImages.get(url);
    if (!hit) {
      const bytes = blobs.get(new URL(url).pathname);
      if (!bytes) throw new Error("chrome bar is gone");
      hit = loadImage(Buffer.from(bytes));
      barImages.set(url, hit);
      while (barImages.size > 8) barImages.delete(barImages.keys().next().value as string);
    }
    return hit;
  };

  const fast = async (c: Capture, look: Look) => {
    const t0 = performance.now();
    const { job, key, bar, style } = await resolve(c, look);
    const [plate, capture, chromeImage] = await Promise.all([
      plateFor(job, key),
      decodedCapture(c),
      bar ? barImage(bar.url) : null,
    ]);
    const t1 = performance.now();
    const screen = screenImage({
      capture,
      chrome: chromeImage && bar ? { image: chromeImage, height: bar.height } : null,
      phone: style.look.device === "phone",
      aspect: job.aspect,
      target: screenExtent(plate.corners),
    });
    const t2 = performance.now();
    const frame = frameBuffer(plate.width, plate.height);
    warpComposite(plate, screen, frame.bytes, frame.offset);
    const t3 = performance.now();
    return { frame, plate, timings: { plate: t1 - t0, screen: t2 - t1, warp: t3 - t2 } };
  };

  const run = async (c: Capture, look: Look): Promise<Composed> => {
    const { frame, plate, timings } = await fast(c, look);
    const t3 = performance.now();
    const bytes = await encodeFrame(frame, FRAME_QUALITY);
    opts.log.debug("composed", {
      look: look.styleId,
      width: plate.width,
      ...timings,
      encode: performance.now() - t3,
    });
    return { bytes, width: plate.width, height: plate.height, contentType: "image/jpeg" };
  };
  // Warmed in the background: the daemon takes jobs at once and films while the compositor's WebGL page
  // starts (26 s on a busy 2-core host, where a daemon restarted after a crash left its renders waiting
  // that long: decision 0902). The first frame waits for it through the queue; a failed start is logged
  // and tried again by that frame.
  queue = open().then(
    () => undefined,
    (err) => {
      if (!closing)
        opts.log.warn("compositor did not start; it is started again for the next frame", { cause: err });
    },
  );
  return {
    plates,
    compose: (c, look) => run(c, look),
    async composePixels(c, look) {
      const { frame, plate } = await fast(c, look);
      return {
        pixels: { data: frame.bytes.subarray(frame.offset), width: plate.width, height: plate.height },
        plate,
      };
    },
    async reference(c, look) {
      const { job } = await resolve(c, look);
      const out = await onPage(
        async (p) =>
          (await p.evaluate((j) => (window as any).__compose.render(j), {
            ...job,
            captureUrl: captureUrl(c),
            raw: true,
          })) as ComposeResult,
      );
      return {
        data: new Uint8Array(Buffer.from(out.rgba ?? "", "base64")),
        width: out.width,
        height: out.height,
      };
    },
    async plateJob(c, look) {
      const { job, key } = await resolve(c, look);
      return { key, draw: () => buildPlate(job) };
    },
    async clipScene(c, look, o) {
      const windowCapture = { ...c, height: Math.min(c.height, o.windowHeight) };
      const base = await resolve(windowCapture, look);
      const framing = Math.max(0.4, Math.min(3, (look.framing ?? 1) * (o.framing ?? 1)));
      const plateOf = (motion: ClipPose) => {
        const job: ComposeJob = { ...base.job, width: o.width, height: o.height, framing, motion };
        const key = plateKey({
          style: base.style,
          theme: look.theme,
          framing,
          width: o.width,
          height: o.height,
          aspect: base.job.aspect,
          motion,
        });
        return plateFor(job, key);
      };
      // one after another: the page draws one plate at a time anyway, and each is cached once drawn
      const plates: PlatePixels[] = [];
      for (const pose of o.poses) plates.push(await plateOf(pose));
      const [capture, chromeImage] = await Promise.all([
        decodedCapture(c),
        base.bar ? barImage(base.bar.url) : null,
      ]);
      let target = { width: 1, height: 1 };
      for (const p of plates) {
        const e = screenExtent(p.corners);
        target = { width: Math.max(target.width, e.width), height: Math.max(target.height, e.height) };
      }
      const texW = Math.min(capture.width, 4096);
      const tw = Math.max(1, Math.min(texW, Math.ceil(target.width)));
      // the whole capture below the header: the strip's aspect covers it all
      const drawn = screenImage({
        capture,
        chrome: chromeImage && base.bar ? { image: chromeImage, height: base.bar.height } : null,
        phone: base.style.look.device === "phone",
        aspect: 10,
        target: { width: tw, height: tw * 10 },
        measure: true,
      });
      const stripAspect = (drawn.header + capture.height * (tw / capture.width)) / tw;
      const strip = screenImage({
        capture,
        chrome: chromeImage && base.bar ? { image: chromeImage, height: base.bar.height } : null,
        phone: base.style.look.device === "phone",
        aspect: stripAspect,
        target: { width: tw, height: tw * stripAspect },
      });
      return {
        plates,
        strip,
        header: strip.header,
        window: { width: strip.width, height: Math.round(strip.width * base.job.aspect) },
      };
    },
    async warm(looks, o = {}) {
      for (const w of looks) {
        while (!closing && o.busy?.()) await Bun.sleep(WARM_YIELD_POLL_MS);
        if (closing) return;
        const capture = {
          png: new Uint8Array(),
          width: w.captureWidth,
          height: w.captureHeight,
          finalUrl: "",
          warnings: [],
        };
        const { job, key } = await resolve(capture, {
          styleId: w.styleId,
          theme: w.theme,
          chrome: w.chrome,
          host: "warm.invalid",
        });
        if (!plates.has(key)) await plateFor(job, key);
      }
    },
    async close() {
      closing = true;
      // A page still starting (three.js parsed, the environment drawn: seconds on SwiftShader) is not
      // waited for: its browser goes now and the start fails. A plate being drawn is finished first.
      if (!page) {
        const starting = launched;
        launched = null;
        await starting?.close().catch(() => {});
      }
      await queue;
      await launched?.close();
      launched = null;
      page = null;
      await redis?.quit().catch(() => redis.disconnect());
    },
  };
}
