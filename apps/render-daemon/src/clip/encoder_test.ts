import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readMp4 } from "@site/domain/media";
import { findFfmpeg } from "@site/domain/screenshots";
import { SOCIAL_PLATFORMS, videoRuleViolations } from "@site/domain/social";
import { encodeFrames, ffmpegArgs } from "./encoder.ts";

// Issue 33, "our clips": a clip encoded with the default options (6 s, 30 fps, 1080x1350, decision 1222)
// passes every platform's video rules; its MP4 has no edit list (`edts/elst`, which Meta's video
// specifications forbid: "no edit lists") and a keyframe at least every 2 s. Read from the MP4's own
// boxes (readMp4) and confirmed by ffprobe's frame list.

const ffmpeg = findFfmpeg(null);
const dir = mkdtempSync(join(tmpdir(), "clip-encoder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Encodes a default clip of moving bands and blocks (so every frame changes, as a scroll does). */
async function defaultClip(): Promise<{ file: string; bytes: Uint8Array }> {
  const width = 1080;
  const height = 1350;
  const fps = 30;
  const frames = 6 * fps;
  const out = join(dir, "default.mp4");
  await encodeFrames({
    ffmpeg: ffmpeg!,
    args: ffmpegArgs({ width, height, fps, frames, out, encoder: "libx264" }),
    frames,
    buffers: [0, 1, 2].map(() => new Uint8Array(width * height * 4)),
    draw(i, px) {
      // Eight band rows for this frame, each a gradient moving with it; the bands scroll down.
      const rows = Array.from({ length: 8 }, (_, band) => {
        const row = new Uint8Array(width * 4);
        for (let x = 0; x < width; x++) {
          row[x * 4] = (band * 32 + (((x >> 6) + i) % 5 === 0 ? 80 : 0)) & 255;
          row[x * 4 + 1] = (x + i * 3) & 255;
          row[x * 4 + 2] = (255 - band * 28) & 255;
          row[x * 4 + 3] = 255;
        }
        return row;
      });
      for (let y = 0; y < height; y++) px.set(rows[((y + i * 12) >> 5) & 7]!, y * width * 4);
    },
  });
  return { file: out, bytes: new Uint8Array(readFileSync(out)) };
}

/** ffprobe's keyframe times (s) of a file's video stream. */
function keyframeTimes(file: string): number[] {
  const p = Bun.spawnSync([
    ...["ffprobe", "-v", "error", "-select_streams", "v:0", "-skip_frame", "nokey"],
    ...["-show_entries", "frame=pts_time", "-of", "csv=p=0", file],
  ]);
  return p.stdout
    .toString()
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => Number(l.split(",")[0]));
}

describe.skipIf(!ffmpeg)("a clip with the default options", () => {
  test("passes every platform's video rules; no edit list; a keyframe at least every 2 s (MP4 boxes and ffprobe agree)", async () => {
    const { file, bytes } = await defaultClip();
    const facts = readMp4(bytes);
    expect(facts).not.toBeNull();
    expect(facts).toMatchObject({
      width: 1080,
      height: 1350,
      codec: "avc1",
      hasEditList: false,
      moovFirst: true,
    });
    expect(facts!.durationS).toBeCloseTo(6, 2);
    expect(facts!.fps).toBeCloseTo(30, 1);
    expect(facts!.maxKeyframeIntervalS).toBeLessThanOrEqual(2 + 1e-6);
    expect(facts!.keyframes).toBeGreaterThanOrEqual(3);
    for (const platform of SOCIAL_PLATFORMS)
      expect({ platform, broken: videoRuleViolations(platform, facts!, bytes.byteLength) }).toEqual({
        platform,
        broken: [],
      });
    const keys = keyframeTimes(file);
    expect(keys[0]).toBeCloseTo(0, 3);
    const gaps = [...keys, 6].slice(1).map((t, i) => t - keys[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(2 + 1e-3);
  }, 180_000);
});
