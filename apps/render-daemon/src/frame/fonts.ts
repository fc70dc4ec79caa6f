import { existsSync } from "node:fs";
import { GlobalFonts } from "@napi-rs/canvas";

/** Font files tried in order (Debian's fonts-dejavu-core, fonts-liberation, Noto); the first found is used. */
export const FONT_CANDIDATES = [
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
  "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
  "/usr/share/fonts/noto/NotoSans-Regular.ttf",
];

/** The family name our chrome text is drawn with. */
export const CHROME_FONT = "ChromeUI";

let registered: string | null | undefined;

/** Registers the first available font file as `ChromeUI`; returns the family to draw with (system sans-serif when none). */
export function chromeFont(candidates: string[] = FONT_CANDIDATES): string {
  if (registered === undefined) {
    registered = null;
    for (const file of candidates) {
      if (existsSync(file) && GlobalFonts.registerFromPath(file, CHROME_FONT)) {
        registered = CHROME_FONT;
        break;
      }
    }
  }
  return registered ? `${registered}, sans-serif` : "sans-serif";
}
