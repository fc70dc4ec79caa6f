import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { type LaunchedBrowser, launchChromium } from "@site/browser";
import type { Logger } from "@site/config";
import { PermanentJobError } from "@site/queue";
import type { HTTPRequest, Page } from "puppeteer-core";

/** The scene page's own origin: every request to it is answered by interception, nothing else leaves. */
export const SCENE_ORIGIN = "http://compositor.local";
const ORIGIN = SCENE_ORIGIN;
/** The scene's browser code (main_browser.ts and the files it imports). */
export const SCENE_DIR = join(dirname(fileURLToPath(import.meta.url)), "scene");
/** The installed three.js build the scene imports. */
export const THREE_BUILD = dirname(fileURLToPath(import.meta.resolve("three")));
const THREE_ADDONS = normalize(join(THREE_BUILD, "..", "examples", "jsm"));

const INDEX_HTML = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{"imports":{"three":"/three.module.js","three/addons/":"/addons/"}}</script>
<style>html,body{margin:0;background:#000}canvas{display:block}</style></head>
<body><script type="module" src="/scene/main_browser.ts"></script></body></html>`;

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
 * The compositor's WebGL page: its own Chromium with the three.js scene, served entirely by request
 * interception (the scene's code, three.js, and the images it draws: captures and chrome bars, kept
 * as the last eight blobs). Work on the page runs one call at a time; a page that failed is replaced
 * by the next call.
 */
export type ScenePage = {
  /** Runs `work` on the page, one call at a time; a failed page is replaced next time. */
  onPage<T>(work: (p: Page) => Promise<T>): Promise<T>;
  /** Serves `bytes` (PNG) at `path` of the page's origin; its URL. The last eight are kept. */
  keep(path: string, bytes: Uint8Array): string;
  /** The bytes served at a path, or at a URL `keep` answered; undefined once they are gone. */
  blob(pathOrUrl: string): Uint8Array | undefined;
  /** Starts the page in the background: the first `onPage` waits for it; a failed start is logged. */
  startInBackground(): void;
  /** True once `close` was called. */
  readonly closing: boolean;
  /** Closes the browser; a page still starting is not waited for, a call in progress finishes first. */
  close(): Promise<void>;
};

/** Opens the scene page (lazily: `startInBackground` or the first `onPage` launches it). */
export function createScenePage(opts: { executablePath: string; gpu: boolean; log: Logger }): ScenePage {
  const blobs = new Map<string, Uint8Array>();
  let launched: LaunchedBrowser | null = null;
  let page: Page | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let closing = false;

  const keep = (path: string, bytes: Uint8Array) => {
    blobs.set(path, bytes);
    while (blobs.size > 8) blobs.delete(blobs.keys().next().value as string);
    return `${ORIGIN}${path}`;
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

  const scene: ScenePage = {
    keep,
    blob: (at) => blobs.get(at.startsWith("/") ? at : new URL(at).pathname),
    onPage<T>(work: (p: Page) => Promise<T>): Promise<T> {
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
    },
    startInBackground() {
      // Warmed in the background: the daemon takes jobs at once and films while the WebGL page starts
      // (26 s on a busy 2-core host, where a daemon restarted after a crash left its renders waiting
      // that long: decision 0902). The first frame waits for it through the queue; a failed start is
      // logged and tried again by that frame.
      queue = open().then(
        () => undefined,
        (err) => {
          if (!closing)
            opts.log.warn("compositor did not start; it is started again for the next frame", { cause: err });
        },
      );
    },
    get closing() {
      return closing;
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
    },
  };
  return scene;
}
