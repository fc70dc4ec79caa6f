import { type Image, loadImage } from "@napi-rs/canvas";
import { resolveStyle } from "@site/domain/screenshots";
import { PermanentJobError } from "@site/queue";
import { drawChromeBar } from "../frame/browser_chrome.ts";
import type { Capture, Look } from "../render_types.ts";
import { chromeScale, frameSize, plateKey, screenAspect } from "./look_geometry.ts";
import type { ComposeJob } from "./scene/main_browser.ts";
import { SCENE_ORIGIN, type ScenePage } from "./scene_page.ts";
import { type DecodedCapture, decodeCapture } from "./warp.ts";

/** A look resolved for one capture: its style, chrome bar (if any), the scene's job and the plate key. */
export type ResolvedLook = Awaited<ReturnType<ComposeInputs["resolve"]>>;

/**
 * What a frame is composed from, each kept for the next frames of the same page or look: the look
 * resolved (style, chrome bar drawn and served on the scene page, frame size, plate key), the capture
 * decoded for the warp (last four) and the chrome bar as an image (last eight).
 */
export type ComposeInputs = ReturnType<typeof createComposeInputs>;

/** The inputs of frames composed on `scene` (chrome bars and captures are served from its page). */
export function createComposeInputs(scene: ScenePage) {
  const chromeBars = new Map<string, { url: string; height: number }>();
  let seq = 0;

  const chromeFor = async (c: Capture, theme: "light" | "dark", host: string) => {
    const k = `${c.width}|${theme}|${host}`;
    const hit = chromeBars.get(k);
    if (hit && scene.blob(hit.url)) return hit;
    const bar = await drawChromeBar({ width: c.width, scale: chromeScale(c.width), theme, host });
    const out = { url: scene.keep(`/chrome/${++seq}.png`, bar.png), height: bar.height };
    chromeBars.set(k, out);
    while (chromeBars.size > 8) chromeBars.delete(chromeBars.keys().next().value as string);
    return out;
  };

  const captureIds = new WeakMap<Uint8Array, string>();
  const decoded = new Map<string, Promise<DecodedCapture>>();
  const barImages = new Map<string, Promise<Image>>();

  return {
    /** The look resolved: style, chrome, frame size, screen aspect, plate key. */
    async resolve(c: Capture, look: Look) {
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
    },

    /** The capture's URL on the scene page (the 3D reference draws it as the screen's texture). */
    captureUrl(c: Capture): string {
      let id = captureIds.get(c.png);
      if (!id) {
        id = `${Bun.hash(c.png).toString(36)}-${c.png.byteLength}`;
        captureIds.set(c.png, id);
      }
      const path = `/capture/${id}.png`;
      if (!scene.blob(path)) scene.keep(path, c.png);
      return `${SCENE_ORIGIN}${path}`;
    },

    /** The capture decoded for the warp; the last four are kept. */
    decodedCapture(c: Capture): Promise<DecodedCapture> {
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
    },

    /** A chrome bar `resolve` drew, as an image to draw on the screen; the last eight are kept. */
    barImage(url: string): Promise<Image> {
      let hit = barImages.get(url);
      if (!hit) {
        const bytes = scene.blob(url);
        if (!bytes) throw new Error("chrome bar is gone");
        hit = loadImage(Buffer.from(bytes));
        barImages.set(url, hit);
        while (barImages.size > 8) barImages.delete(barImages.keys().next().value as string);
      }
      return hit;
    },
  };
}
