import { createCanvas } from "@napi-rs/canvas";
import type { MediaContext } from "@site/domain/media";

/** The poster key a clip's MP4 is stored beside (addClipToLibrary: `<stem>.mp4` and `<stem>-poster.jpg`). */
export function clipPosterKey(videoKey: string): string | null {
  return videoKey.endsWith(".mp4") ? `${videoKey.slice(0, -4)}-poster.jpg` : null;
}

/**
 * A video's poster for the platforms that take one with the video (Reddit's `video_poster_url`): the
 * clip's own poster (its first frame) when the video is a clip, else a plain dark frame of the video's
 * size (PRAW sends its logo when the caller has none; a neutral frame says less). Read on demand.
 */
export function videoPoster(
  ctx: MediaContext,
  row: { key: string; width: number | null; height: number | null },
): { contentType: "image/jpeg"; read(): Promise<Uint8Array<ArrayBuffer>> } {
  return {
    contentType: "image/jpeg",
    async read() {
      const key = clipPosterKey(row.key);
      const got = key ? await ctx.store.get(key).catch(() => null) : null;
      if (got) return new Uint8Array(await new Response(got.body).arrayBuffer());
      const w = Math.min(Math.max(row.width ?? 640, 16), 1920);
      const h = Math.min(Math.max(row.height ?? 360, 16), 1920);
      const canvas = createCanvas(w, h);
      const g = canvas.getContext("2d");
      g.fillStyle = "#111111";
      g.fillRect(0, 0, w, h);
      return new Uint8Array(await canvas.encode("jpeg", 80));
    },
  };
}
