// Reads what the platforms' video rules look at from an MP4 (ISO/IEC 14496-12, ISO base media file
// format) without decoding it: the boxes of `moov` (mvhd, tkhd, mdhd, hdlr, stts, stss, edts/elst).

/** What an MP4 says about its video track and its layout. */
export type Mp4Facts = {
  /** The video track's duration (mdhd duration / timescale), in seconds. */
  durationS: number;
  /** The video track's display size (tkhd width and height, 16.16 fixed point). */
  width: number;
  height: number;
  /** Frames per second: the video track's samples over its duration. */
  fps: number;
  /** The video track's sample entry (avc1, hvc1…). */
  codec: string;
  /** Whether any track has an edit list (`edts/elst`). */
  hasEditList: boolean;
  /** The longest time between two keyframes (sync samples), the last one to the end included, in seconds. */
  maxKeyframeIntervalS: number;
  /** Keyframes (sync samples) of the video track. */
  keyframes: number;
  /** Whether an audio track (handler `soun`) is present. */
  hasAudio: boolean;
  /** Whether `moov` comes before `mdat` (faststart). */
  moovFirst: boolean;
};

type Box = { type: string; start: number; end: number };

/** The boxes between `from` and `to` (header sizes 32-bit, 64-bit `size == 1`, or to the end `0`). */
function boxes(v: DataView, from: number, to: number): Box[] {
  const out: Box[] = [];
  let at = from;
  while (at + 8 <= to) {
    let size = v.getUint32(at);
    const type = String.fromCharCode(
      v.getUint8(at + 4),
      v.getUint8(at + 5),
      v.getUint8(at + 6),
      v.getUint8(at + 7),
    );
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) break;
      size = Number(v.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) break;
    out.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return out;
}

const child = (v: DataView, b: Box | undefined, type: string) =>
  b ? boxes(v, b.start, b.end).find((c) => c.type === type) : undefined;

/** `path` of nested boxes under `b` (e.g. ["mdia", "minf", "stbl"]). */
function descend(v: DataView, b: Box | undefined, path: string[]): Box | undefined {
  let at = b;
  for (const p of path) at = child(v, at, p);
  return at;
}

/** Reads the (version 0 or 1) timescale and duration of an mdhd or mvhd box. */
function timing(v: DataView, b: Box): { timescale: number; duration: number } {
  const version = v.getUint8(b.start);
  if (version === 1)
    return { timescale: v.getUint32(b.start + 20), duration: Number(v.getBigUint64(b.start + 24)) };
  return { timescale: v.getUint32(b.start + 12), duration: v.getUint32(b.start + 16) };
}

/** The decode time (in timescale units) of each sample, from stts's runs of (count, delta). */
function sampleTimes(v: DataView, stts: Box): number[] {
  const n = v.getUint32(stts.start + 4);
  const times: number[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    const count = v.getUint32(stts.start + 8 + i * 8);
    const delta = v.getUint32(stts.start + 12 + i * 8);
    for (let k = 0; k < count; k++) {
      times.push(t);
      t += delta;
    }
  }
  return times;
}

/**
 * The facts of an MP4's video track, or null when the bytes are not an MP4 with a readable video track
 * (no `moov`, no `vide` handler, or boxes cut short).
 */
export function readMp4(bytes: Uint8Array): Mp4Facts | null {
  try {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const top = boxes(v, 0, bytes.byteLength);
    const moov = top.find((b) => b.type === "moov");
    if (!moov) return null;
    const mdat = top.findIndex((b) => b.type === "mdat");
    const traks = boxes(v, moov.start, moov.end).filter((b) => b.type === "trak");
    const handler = (t: Box) => {
      const h = descend(v, t, ["mdia", "hdlr"]);
      return h ? String.fromCharCode(...bytes.subarray(h.start + 8, h.start + 12)) : "";
    };
    const video = traks.find((t) => handler(t) === "vide");
    if (!video) return null;
    const tkhd = child(v, video, "tkhd");
    const mdhd = descend(v, video, ["mdia", "mdhd"]);
    const stbl = descend(v, video, ["mdia", "minf", "stbl"]);
    const stts = child(v, stbl, "stts");
    const stsd = child(v, stbl, "stsd");
    if (!tkhd || !mdhd || !stts || !stsd) return null;
    // tkhd: width and height are the last two 32-bit fields (16.16 fixed point).
    const width = v.getUint32(tkhd.end - 8) / 65536;
    const height = v.getUint32(tkhd.end - 4) / 65536;
    const { timescale, duration } = timing(v, mdhd);
    const times = sampleTimes(v, stts);
    const durationS = timescale > 0 ? duration / timescale : 0;
    // stss lists the sync samples (1-based); without it every sample is one (ISO/IEC 14496-12 §8.6.2).
    const stss = child(v, stbl, "stss");
    const sync = stss
      ? Array.from({ length: v.getUint32(stss.start + 4) }, (_, i) => v.getUint32(stss.start + 8 + i * 4))
      : times.map((_, i) => i + 1);
    const at = sync.map((n) => (times[n - 1] ?? duration) / timescale);
    const edges = [...at, durationS];
    let maxGap = at.length === 0 ? durationS : 0;
    for (let i = 1; i < edges.length; i++) maxGap = Math.max(maxGap, edges[i]! - edges[i - 1]!);
    return {
      durationS,
      width,
      height,
      fps: durationS > 0 ? times.length / durationS : 0,
      codec: String.fromCharCode(...bytes.subarray(stsd.start + 12, stsd.start + 16)),
      hasEditList: traks.some((t) => child(v, child(v, t, "edts"), "elst") !== undefined),
      maxKeyframeIntervalS: maxGap,
      keyframes: sync.length,
      hasAudio: traks.some((t) => handler(t) === "soun"),
      moovFirst: mdat === -1 || top.indexOf(moov) < mdat,
    };
  } catch {
    // A box cut short or out of bounds: not an MP4 this reader can judge.
    return null;
  }
}
