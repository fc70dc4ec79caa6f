import { accessSync, constants } from "node:fs";

/**
 * The FFmpeg that encodes device clips: FFMPEG_PATH when it is an executable file, else `ffmpeg` on PATH
 * (the bootstrap installs Debian's through apt where root); null when there is none (clips answer 501).
 */
export function findFfmpeg(configured: string | null): string | null {
  if (configured) {
    try {
      accessSync(configured, constants.X_OK);
      return configured;
    } catch {
      return null;
    }
  }
  return Bun.which("ffmpeg");
}
