import type { Capture, Look } from "../render_types.ts";
import type { ComposeInputs } from "./compose_inputs.ts";
import { type ClipPose, plateKey } from "./look_geometry.ts";
import type { ComposeJob } from "./scene/main_browser.ts";
import { type Pixels, type PlatePixels, screenExtent, screenImage } from "./warp.ts";

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

/** What a clip's scene is asked for: the output size, the window's rows, the poses, a framing factor. */
export type ClipSceneOptions = {
  width: number;
  height: number;
  windowHeight: number;
  poses: ClipPose[];
  framing?: number;
};

/**
 * A clip's scene: the plate of each pose at the output size (through `plateFor`, cached and shared like
 * stills' plates), and the tall capture drawn once at the largest size any pose's screen shows it.
 */
export async function buildClipScene(
  inputs: ComposeInputs,
  plateFor: (job: ComposeJob, key: string) => Promise<PlatePixels>,
  c: Capture,
  look: Look,
  o: ClipSceneOptions,
): Promise<ClipScene> {
  const windowCapture = { ...c, height: Math.min(c.height, o.windowHeight) };
  const base = await inputs.resolve(windowCapture, look);
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
    inputs.decodedCapture(c),
    base.bar ? inputs.barImage(base.bar.url) : null,
  ]);
  let target = { width: 1, height: 1 };
  for (const p of plates) {
    const e = screenExtent(p.corners);
    target = { width: Math.max(target.width, e.width), height: Math.max(target.height, e.height) };
  }
  const texW = Math.min(capture.width, 4096);
  const tw = Math.max(1, Math.min(texW, Math.ceil(target.width)));
  const chrome = chromeImage && base.bar ? { image: chromeImage, height: base.bar.height } : null;
  const phone = base.style.look.device === "phone";
  // the whole capture below the header: the strip's aspect covers it all
  const drawn = screenImage({
    capture,
    chrome,
    phone,
    aspect: 10,
    target: { width: tw, height: tw * 10 },
    measure: true,
  });
  const stripAspect = (drawn.header + capture.height * (tw / capture.width)) / tw;
  const strip = screenImage({
    capture,
    chrome,
    phone,
    aspect: stripAspect,
    target: { width: tw, height: tw * stripAspect },
  });
  return {
    plates,
    strip,
    header: strip.header,
    window: { width: strip.width, height: Math.round(strip.width * base.job.aspect) },
  };
}
