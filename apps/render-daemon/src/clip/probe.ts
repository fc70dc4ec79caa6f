// Reads MP4 files the way a platform would (tests and the clip bench): ffprobe's view, the top-level
// boxes in file order, and single frames decoded by FFmpeg.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The top-level ISO BMFF boxes of a file, in order (type and size): faststart puts moov before mdat. */
export function topLevelBoxes(b: Uint8Array): { type: string; size: number }[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: { type: string; size: number }[] = [];
  let at = 0;
  while (at + 8 <= b.byteLength) {
    let size = v.getUint32(at);
    const type = String.fromCharCode(...b.subarray(at + 4, at + 8));
    if (size === 1) size = Number(v.getBigUint64(at + 8));
    else if (size === 0) size = b.byteLength - at;
    if (size < 8) break;
    out.push({ type, size });
    at += size;
  }
  return out;
}

/** ffprobe's JSON about a file's streams and container. */
export async function ffprobe(file: string): Promise<{
  streams: Record<string, unknown>[];
  format: Record<string, unknown>;
}> {
  const p = Bun.spawn(
    ["ffprobe", "-v", "error", "-count_frames", "-show_streams", "-show_format", "-of", "json", file],
    { stdout: "pipe", stderr: "pipe" },
  );
  const text = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`ffprobe failed: ${await new Response(p.stderr).text()}`);
  return JSON.parse(text);
}

/** Frame `n` (from 0) of a video, decoded by FFmpeg to RGBA. */
export async function frameOf(file: string, n: number, width: number, height: number): Promise<Uint8Array> {
  const p = Bun.spawn(
    [
      "ffmpeg",
      "-v",
      "error",
      "-i",
      file,
      "-vf",
      `select=eq(n\\,${n})`,
      "-frames:v",
      "1",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "rgba",
      "pipe:1",
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const bytes = new Uint8Array(await new Response(p.stdout).arrayBuffer());
  if ((await p.exited) !== 0 || bytes.byteLength !== width * height * 4)
    throw new Error(`could not decode frame ${n}: ${await new Response(p.stderr).text()}`);
  return bytes;
}

/** Mean absolute difference per channel of two RGBA images of one size (0–255). */
export function meanDifference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) if ((i & 3) !== 3) sum += Math.abs(a[i] - b[i]);
  return sum / ((a.length / 4) * 3);
}

/** Writes bytes to a temporary file, runs `work` on its path, removes it. */
export async function withTempFile<T>(
  bytes: Uint8Array,
  name: string,
  work: (path: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "clip-probe-"));
  try {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return await work(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
