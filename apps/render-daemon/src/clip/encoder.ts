// Frames piped into FFmpeg as raw RGBA (decision 1222): H.264, yuv420p, faststart, CRF, no audio; a
// keyframe every 2 s and no edit list (decision 1493).
import { spawn } from "node:child_process";

/** How a clip is encoded: libx264 on a CPU host, NVENC where the host has a GPU and FFmpeg has it. */
export type EncoderKind = "libx264" | "h264_nvenc";

/** x264's constant rate factor for clips: visually clean text at sizes social platforms re-encode. */
export const CLIP_CRF = 20;

/** FFmpeg's words for a full disk (or a quota): its strerror text of ENOSPC and EDQUOT. */
const DISK_FULL = /No space left on device|Disk quota exceeded/i;

/**
 * FFmpeg failed (decision 1422): the message is a sentence of ours, shown to users as the clip's error;
 * FFmpeg's exit status and last lines of stderr are its `cause`, which the worker's log line carries.
 */
export class EncoderError extends Error {
  constructor(exit: number, stderr: string) {
    const lines = stderr.trim().split("\n").slice(-3).join(" | ");
    super(
      DISK_FULL.test(stderr)
        ? "The clip could not be written: the render host ran out of temporary disk space. Try again later."
        : "The clip could not be encoded. Try again later.",
      { cause: new Error(`FFmpeg failed (exit ${exit}): ${lines}`) },
    );
    this.name = "EncoderError";
  }
}

/** FFmpeg's arguments for `frames` raw RGBA frames of `width`×`height` on stdin, written to `out`. */
export function ffmpegArgs(o: {
  width: number;
  height: number;
  fps: number;
  frames: number;
  out: string;
  encoder: EncoderKind;
}): string[] {
  const codec =
    o.encoder === "h264_nvenc"
      ? ["-c:v", "h264_nvenc", "-preset", "p4", "-rc", "vbr", "-cq", String(CLIP_CRF + 3), "-b:v", "0"]
      : ["-c:v", "libx264", "-preset", "veryfast", "-crf", String(CLIP_CRF)];
  return [
    "-hide_banner",
    "-loglevel",
    "error",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgba",
    "-s",
    `${o.width}x${o.height}`,
    "-framerate",
    String(o.fps),
    "-i",
    "pipe:0",
    "-frames:v",
    String(o.frames),
    "-an",
    "-vf",
    "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p",
    ...codec,
    "-profile:v",
    "high",
    "-pix_fmt",
    "yuv420p",
    "-colorspace",
    "bt709",
    "-color_primaries",
    "bt709",
    "-color_trc",
    "bt709",
    "-color_range",
    "tv",
    "-r",
    String(o.fps),
    // A keyframe at least every 2 s (GOP of 2 × fps frames), as the platforms' encoding guides ask; no
    // B-frames, so no composition delay: the first frame is shown at 0 without an edit list.
    "-g",
    String(o.fps * 2),
    "-bf",
    "0",
    "-video_track_timescale",
    String(o.fps * 1000),
    // No edit list (`edts/elst`): Meta's video specifications forbid one ("no edit lists",
    // https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reel-specifications).
    "-use_editlist",
    "0",
    "-movflags",
    "+faststart",
    "-f",
    "mp4",
    "-y",
    o.out,
  ];
}

/**
 * Runs FFmpeg over `frames` frames drawn by `draw(i, pixels)` into one of `buffers` (RGBA views, reused:
 * a buffer is drawn again only once FFmpeg has taken its bytes). Writes wait for the pipe (back-pressure):
 * memory stays at the buffers, whatever the clip's length. `onFirst` reads frame 0 while it is sent.
 * Resolves when FFmpeg exits 0; rejects with an EncoderError otherwise (its last lines in the cause), or
 * when `signal` aborts.
 */
export async function encodeFrames(o: {
  ffmpeg: string;
  args: string[];
  frames: number;
  buffers: Uint8Array[];
  draw(i: number, pixels: Uint8Array): void;
  onFirst?(index: number): Promise<void>;
  signal?: AbortSignal;
}): Promise<{ encodeWaitMs: number; drawMs: number; writeMs: number }> {
  const child = spawn(o.ffmpeg, o.args, { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, sig) => resolve(code ?? (sig ? 128 : 1)));
  });
  exited.catch(() => {});
  const kill = () => child.kill("SIGKILL");
  o.signal?.addEventListener("abort", kill, { once: true });
  const pending: (Promise<void> | null)[] = o.buffers.map(() => null);
  let encodeWaitMs = 0;
  let drawMs = 0;
  let writeMs = 0;
  let broken: Error | null = null;
  child.stdin.on("error", (err) => {
    broken = err;
  });
  try {
    for (let i = 0; i < o.frames; i++) {
      if (o.signal?.aborted) throw o.signal.reason ?? new Error("aborted");
      if (broken) break;
      const slot = i % o.buffers.length;
      const t0 = performance.now();
      await pending[slot];
      const t1 = performance.now();
      encodeWaitMs += t1 - t0;
      const buf = o.buffers[slot];
      o.draw(i, buf);
      drawMs += performance.now() - t1;
      const t2 = performance.now();
      const written = new Promise<void>((resolve) => {
        child.stdin.write(buf, () => resolve());
      });
      writeMs += performance.now() - t2;
      // frame 0 goes to FFmpeg at once; `onFirst` reads the same bytes meanwhile, and the buffer is
      // drawn again only once both are done
      if (i === 0 && o.onFirst) {
        const both = Promise.all([written, o.onFirst(slot)]).then(() => {});
        both.catch(() => {});
        pending[slot] = both;
      } else pending[slot] = written;
    }
    const t0 = performance.now();
    await Promise.all(pending);
    child.stdin.end();
    const code = await exited;
    encodeWaitMs += performance.now() - t0;
    if (code !== 0 || broken) throw new EncoderError(code, stderr);
    return { encodeWaitMs, drawMs, writeMs };
  } catch (err) {
    kill();
    throw err;
  } finally {
    o.signal?.removeEventListener("abort", kill);
  }
}

/**
 * Whether this FFmpeg can encode with `name` on this host: a tenth of a second of black, encoded for
 * real. Listing is not enough: Debian's FFmpeg lists h264_nvenc on every machine, and a host with a
 * GPU but no NVENC engine (NVIDIA's data-centre H100 and H200 have none, per its Video Encode and
 * Decode support matrix), or without the driver's libcuda, fails at the first frame. NVENC is only
 * tried where RENDER_GPU=1 says there is a GPU (decision 1224).
 */
export async function encoderWorks(
  ffmpeg: string,
  name: string,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const p = Bun.spawn(
    [
      ffmpeg,
      "-hide_banner",
      "-loglevel",
      "error",
      "-f",
      "lavfi",
      "-i",
      "color=c=black:s=256x256:r=10:d=0.1",
      "-c:v",
      name,
      "-f",
      "null",
      "-",
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  const stderr = await new Response(p.stderr).text();
  if ((await p.exited) === 0) return { ok: true };
  const why = stderr.trim().split("\n").filter(Boolean).slice(0, 2).join("; ").slice(0, 300);
  return { ok: false, why: why || `ffmpeg exited ${p.exitCode}` };
}

/** The clips' encoder for this process: NVENC where RENDER_GPU=1 and it encodes here, else libx264. */
export async function pickEncoder(
  ffmpeg: string,
  renderGpu: boolean,
  log: { warn(msg: string, fields?: Record<string, unknown>): void },
): Promise<EncoderKind> {
  if (!renderGpu) return "libx264";
  const nvenc = await encoderWorks(ffmpeg, "h264_nvenc");
  if (nvenc.ok) return "h264_nvenc";
  log.warn("RENDER_GPU=1 but NVENC cannot encode on this host: clips use libx264", { cause: nvenc.why });
  return "libx264";
}
