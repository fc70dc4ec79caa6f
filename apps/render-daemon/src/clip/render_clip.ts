// A device clip from a filmed page: plates once per pose, then frame by frame into FFmpeg (1220–1222).
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createOwnedDir, sweepDeadOwnersDirs } from "@site/browser";
import { drawMapped, type ScreenMap, screenMap } from "../compose/clip_map.ts";
import { blendPlates } from "../compose/clip_warp.ts";
import type { Compositor } from "../compose/compositor.ts";
import { encodeFrame, frameBuffer, type PlatePixels, warpWindow } from "../compose/warp.ts";
import type { Capture, ClipOutput, ClipRenderSpec, Look } from "../render_types.ts";
import { type EncoderKind, encodeFrames, ffmpegArgs } from "./encoder.ts";
import { frameAt, platePoses } from "./motion.ts";

/** JPEG quality of a clip's poster. */
const POSTER_QUALITY = 88;

/** Every clip's temporary folder starts with this (then the owner's pid), in the system's temp folder. */
export const CLIP_TEMP_PREFIX = "site-clip-";

/**
 * Removes the clip folders (and their partial `clip.mp4`) of processes that are gone: a daemon SIGKILLed
 * or OOM-killed mid-encode never reaches its `finally` (decision 1422). Run at the daemon's start and
 * before each clip. Returns the folders removed.
 */
export function sweepClipTemp(root?: string): string[] {
  return sweepDeadOwnersDirs(CLIP_TEMP_PREFIX, root);
}

/** Frames in flight: one being drawn, two waiting in FFmpeg's pipe (decision 1222). */
const BUFFERS = 3;

/**
 * Renders a clip: the look's plates at each pose (cached and shared), the capture drawn once as a tall
 * strip at the screen's size, then each frame warped and composited into a reused buffer and piped into
 * FFmpeg; the poster is frame 0 as JPEG. The MP4 is written to a private temporary directory (faststart
 * moves the index to the front, which needs a seekable file) and read back.
 */
export async function renderClip(
  deps: { compositor: Compositor; ffmpeg: string; encoder: EncoderKind },
  capture: Capture,
  look: Look,
  spec: ClipRenderSpec,
  signal?: AbortSignal,
): Promise<ClipOutput> {
  const t0 = performance.now();
  const frames = Math.round(spec.durationS * spec.fps);
  const scene = await deps.compositor.clipScene(capture, look, {
    width: spec.width,
    height: spec.height,
    windowHeight: spec.windowHeight,
    poses: platePoses(spec.motion),
    // a moving device keeps a little more room around it
    framing: spec.motion === "scroll" ? 1 : 1.08,
  });
  const t1 = performance.now();
  const warnings: string[] = [];
  const travel = Math.max(0, scene.strip.height - scene.window.height);
  if (travel < 2) warnings.push("the page is no taller than the screen, so the clip has nothing to scroll");
  // owned by this process, so that a restart (or another daemon's next clip) removes it after a kill
  sweepClipTemp();
  const dir = createOwnedDir(CLIP_TEMP_PREFIX);
  const out = join(dir, "clip.mp4");
  const buffers = Array.from({ length: BUFFERS }, () => frameBuffer(spec.width, spec.height));
  const blended: PlatePixels | undefined =
    scene.plates.length > 1
      ? {
          ...scene.plates[0],
          base: new Uint8Array(scene.plates[0].base.length),
          mask: new Uint8Array(scene.plates[0].mask.length),
        }
      : undefined;
  const win = { width: scene.window.width, height: scene.window.height, header: scene.header };
  // a still plate's screen mapping (decision 1223), one at a time: computed when a stored plate is drawn
  // a second frame in a row (a still device: every frame of `scroll`); which plate's base each buffer
  // holds outside the screen, so a buffer drawn again with the same plate only rewrites the screen
  let map: ScreenMap | null = null;
  let mapped: PlatePixels | null = null;
  let last: PlatePixels | null = null;
  const held = new Map<Uint8Array, PlatePixels | null>();
  let poster: Uint8Array | null = null;
  let posterMs = 0;
  try {
    const { encodeWaitMs, drawMs, writeMs } = await encodeFrames({
      ffmpeg: deps.ffmpeg,
      args: ffmpegArgs({
        width: spec.width,
        height: spec.height,
        fps: spec.fps,
        frames,
        out,
        encoder: deps.encoder,
      }),
      frames,
      buffers: buffers.map((b) => b.bytes.subarray(b.offset)),
      signal,
      draw: (i, pixels) => {
        const f = frameAt(spec.motion, i, frames);
        const a = scene.plates[f.plate];
        const plate =
          blended && f.blend > 0 ? blendPlates(a, scene.plates[f.plate + 1], f.blend, blended) : a;
        const dy = f.scroll * travel;
        const still = plate !== blended && plate === last;
        last = plate === blended ? null : plate;
        if (still && mapped !== plate) {
          map = screenMap(plate, scene.strip, win);
          mapped = plate;
        }
        if (still && map) {
          drawMapped(map, dy, pixels, 0, held.get(pixels) === plate);
          held.set(pixels, plate);
        } else {
          warpWindow(plate, scene.strip, { ...win, dy }, pixels);
          held.set(pixels, null);
        }
      },
      onFirst: async (slot) => {
        const p0 = performance.now();
        poster = await encodeFrame(buffers[slot], POSTER_QUALITY);
        posterMs = performance.now() - p0;
      },
    });
    const video = new Uint8Array(await readFile(out));
    const total = performance.now() - t0;
    return {
      video,
      poster: poster as unknown as Uint8Array,
      width: spec.width,
      height: spec.height,
      warnings,
      timings: {
        plates: t1 - t0,
        frames: drawMs,
        encodeWait: encodeWaitMs,
        poster: posterMs,
        write: writeMs,
        total,
        encoder: deps.encoder,
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
