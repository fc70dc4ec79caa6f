import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { findFfmpeg } from "@site/domain/screenshots";
import { encoderWorks, pickEncoder } from "./encoder.ts";

// Decision 1224: with RENDER_GPU=1 the clips' encoder is NVENC only once it has encoded a frame here.
// This machine has FFmpeg that lists h264_nvenc but no NVIDIA driver: the case of a GPU host without an
// NVENC engine (H100, H200) or without libcuda, where every clip used to fail.

const ffmpeg = findFfmpeg(null);
const nvidia = existsSync("/dev/nvidia0");

const warnings = () => {
  const seen: { msg: string; fields?: Record<string, unknown> }[] = [];
  return { seen, warn: (msg: string, fields?: Record<string, unknown>) => seen.push({ msg, fields }) };
};

describe.skipIf(!ffmpeg || nvidia)(
  "the clips' encoder on a host where NVENC is listed but cannot encode",
  () => {
    test("FFmpeg lists h264_nvenc, yet a real encode with it fails and says why; libx264 encodes", async () => {
      const listed = Bun.spawnSync([ffmpeg!, "-hide_banner", "-encoders"]).stdout.toString();
      expect(listed).toMatch(/\sh264_nvenc\s/);
      const nvenc = await encoderWorks(ffmpeg!, "h264_nvenc");
      expect(nvenc.ok).toBe(false);
      if (!nvenc.ok) expect(nvenc.why.length).toBeGreaterThan(0);
      expect(await encoderWorks(ffmpeg!, "libx264")).toEqual({ ok: true });
    });

    test("RENDER_GPU=1 falls back to libx264 with one warning naming FFmpeg's reason; without it nothing is probed", async () => {
      const gpu = warnings();
      expect(await pickEncoder(ffmpeg!, true, gpu)).toBe("libx264");
      expect(gpu.seen).toHaveLength(1);
      expect(gpu.seen[0].msg).toContain("NVENC cannot encode on this host");
      expect(String(gpu.seen[0].fields?.cause)).not.toBe("");
      const cpu = warnings();
      expect(await pickEncoder(ffmpeg!, false, cpu)).toBe("libx264");
      expect(cpu.seen).toEqual([]);
    });
  },
);
