import type { Logger } from "@site/config";
import type { ObjectStore } from "@site/storage";
import IORedis from "ioredis";
import type { Capture, Composed, Look } from "../render_types.ts";
import { buildClipScene, type ClipScene, type ClipSceneOptions } from "./clip_scene.ts";
import { createComposeInputs } from "./compose_inputs.ts";
import { createPlateCache, fromPacked, type PlateCache } from "./plate_cache.ts";
import type { ComposeJob, ComposeResult, PlateResult } from "./scene/main_browser.ts";
import { createScenePage } from "./scene_page.ts";
import {
  encodeFrame,
  frameBuffer,
  type Pixels,
  type PlatePixels,
  screenExtent,
  screenImage,
  warpComposite,
} from "./warp.ts";

export type { ClipScene, ClipSceneOptions } from "./clip_scene.ts";
export { type ClipPose, chromeScale, frameSize, plateKey, screenAspect } from "./look_geometry.ts";

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
  clipScene(c: Capture, look: Look, opts: ClipSceneOptions): Promise<ClipScene>;
  /**
   * Builds (or loads) the plates of these looks ahead of the first render that needs them, one at a
   * time; before each, waits while `opts.busy()` says renders are in flight, so warming yields to them
   * (decision 1505). A plate a render needs meanwhile is built by that render.
   */
  warm(looks: WarmLook[], opts?: { busy?: () => boolean }): Promise<void>;
  plates: PlateCache;
  close(): Promise<void>;
};

/** A look to warm: the capture size it will frame (the default viewport's is 1440×900). */
export type WarmLook = {
  styleId: string;
  theme: "light" | "dark";
  captureWidth: number;
  captureHeight: number;
  chrome?: Look["chrome"];
};

/**
 * Starts the compositor from its collaborators: the scene page (its own Chromium with a warm three.js
 * page: WebGL, SwiftShader unless `gpu`), the compose inputs (looks resolved, captures decoded, chrome
 * bars drawn) and the plate cache (memory, the object store, a build lock on Redis). Resolves at once;
 * the page warms in the background and `compose` waits for it.
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
  const scene = createScenePage(opts);
  const inputs = createComposeInputs(scene);

  const buildPlate = (job: ComposeJob): Promise<PlatePixels> =>
    scene.onPage(async (p) => {
      const out = (await p.evaluate((j) => (window as any).__compose.plate(j), job)) as PlateResult;
      opts.log.debug("plate drawn", { width: out.width, height: out.height, ...out.timings });
      return fromPacked(new Uint8Array(Buffer.from(out.rgba, "base64")), out.width, out.height, out.corners);
    });
  const plateFor = (job: ComposeJob, key: string) => plates.get(key, () => buildPlate(job));

  /** The fast path: the look's plate and a projective warp of the capture into it, on the CPU. */
  const fast = async (c: Capture, look: Look) => {
    const t0 = performance.now();
    const { job, key, bar, style } = await inputs.resolve(c, look);
    const [plate, capture, chromeImage] = await Promise.all([
      plateFor(job, key),
      inputs.decodedCapture(c),
      bar ? inputs.barImage(bar.url) : null,
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

  scene.startInBackground();
  return {
    plates,
    async compose(c, look) {
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
    },
    async composePixels(c, look) {
      const { frame, plate } = await fast(c, look);
      return {
        pixels: { data: frame.bytes.subarray(frame.offset), width: plate.width, height: plate.height },
        plate,
      };
    },
    async reference(c, look) {
      const { job } = await inputs.resolve(c, look);
      const out = await scene.onPage(
        async (p) =>
          (await p.evaluate((j) => (window as any).__compose.render(j), {
            ...job,
            captureUrl: inputs.captureUrl(c),
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
      const { job, key } = await inputs.resolve(c, look);
      return { key, draw: () => buildPlate(job) };
    },
    clipScene: (c, look, o) => buildClipScene(inputs, plateFor, c, look, o),
    async warm(looks, o = {}) {
      for (const w of looks) {
        while (!scene.closing && o.busy?.()) await Bun.sleep(WARM_YIELD_POLL_MS);
        if (scene.closing) return;
        const capture = {
          png: new Uint8Array(),
          width: w.captureWidth,
          height: w.captureHeight,
          finalUrl: "",
          warnings: [],
        };
        const { job, key } = await inputs.resolve(capture, {
          styleId: w.styleId,
          theme: w.theme,
          chrome: w.chrome,
          host: "warm.invalid",
        });
        if (!plates.has(key)) await plateFor(job, key);
      }
    },
    async close() {
      await scene.close();
      await redis?.quit().catch(() => redis.disconnect());
    },
  };
}
