import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

const PATH_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/**
 * The Chromium this host films with: CHROMIUM_PATH when set (an explicit path that does not exist means
 * none, never a silent fallback), else /usr/bin/chromium, else chromium or google-chrome on PATH; null
 * when none. The API (501 NOT_CONFIGURED, login links' `interactive`) and the daemon share it.
 */
export function findBrowser(configured: string | null, path = process.env.PATH ?? ""): string | null {
  if (configured) return existsSync(configured) ? configured : null;
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  for (const dir of path.split(delimiter).filter(Boolean)) {
    for (const name of PATH_NAMES) {
      const file = join(dir, name);
      if (existsSync(file)) return file;
    }
  }
  return null;
}
