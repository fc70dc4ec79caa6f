import { describe, expect, test } from "bun:test";
import { createLogger } from "@site/config";
import { publicFailureMessage } from "@site/domain/core";
import { findFfmpeg } from "@site/domain/screenshots";
import { EncoderError, encodeFrames, ffmpegArgs } from "./encoder.ts";

// Issue 38, "Bytes without a row": a full temp disk showed FFmpeg's own stderr to the user as the clip's
// error. Errors shown to users are sentences of ours; the tool's own text goes to the log (decision 1422).
// A real FFmpeg writes its MP4 to /dev/full, where every write fails with ENOSPC, as on a full disk.

const ffmpeg = findFfmpeg(null);
const W = 64;
const H = 64;

/** Encodes 6 grey frames to `out` with the clip's arguments; the error it rejects with, or null. */
async function encodeTo(out: string): Promise<unknown> {
  return encodeFrames({
    ffmpeg: ffmpeg!,
    args: ffmpegArgs({ width: W, height: H, fps: 30, frames: 6, out, encoder: "libx264" }),
    frames: 6,
    buffers: [new Uint8Array(W * H * 4).fill(128), new Uint8Array(W * H * 4).fill(128)],
    draw: () => {},
  }).then(
    () => null,
    (err: unknown) => err,
  );
}

describe.skipIf(!ffmpeg)("an encode on a full temp disk", () => {
  test("the user's message is a sentence of ours; FFmpeg's own words are in the log", async () => {
    const err = await encodeTo("/dev/full");
    expect(err).toBeInstanceOf(EncoderError);
    // What the clip's `error` shows (the worker's publicMessage: publicFailureMessage with its fallback).
    const shown = publicFailureMessage(err, "The render failed; the credits were refunded.");
    expect(shown).toBe(
      "The clip could not be written: the render host ran out of temporary disk space. Try again later.",
    );
    expect(shown).not.toMatch(/ffmpeg|no space left|output file|codec|\/dev/i);
    // The worker's log line of the same failure carries FFmpeg's text.
    const lines: string[] = [];
    const log = createLogger("info", {}, { sink: (l) => lines.push(l) });
    log.warn("render failed for good", { cause: err });
    expect(lines.join("\n")).toContain("No space left on device");
    expect(lines.join("\n")).toContain("FFmpeg");
  });

  test("any other FFmpeg failure is a sentence of ours too", async () => {
    // An output FFmpeg cannot open: a folder that does not exist.
    const err = await encodeTo("/nonexistent-dir/clip.mp4");
    expect(err).toBeInstanceOf(EncoderError);
    expect(publicFailureMessage(err, "fallback")).toBe("The clip could not be encoded. Try again later.");
    const lines: string[] = [];
    createLogger("info", {}, { sink: (l) => lines.push(l) }).warn("render failed", { cause: err });
    expect(lines.join("\n")).toContain("No such file or directory");
  });
});
