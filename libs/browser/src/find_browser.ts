import { existsSync } from "node:fs";
import { basename, delimiter, dirname, join } from "node:path";

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

/** Whether a binary is Chromium's headless shell (chrome-headless-shell, Debian's chromium-headless-shell). */
export function isHeadlessShell(executable: string): boolean {
  return /headless[-_]shell$/.test(basename(executable));
}

/**
 * The headless shell installed beside a Chromium, for filming (decision 1214): the same Blink without
 * the browser's UI layers; a page costs about a third less CPU. Debian installs the binary in
 * /usr/lib/chromium (with a wrapper script in /usr/bin, which would stay as the browser's parent), so
 * the library directory is looked at first. Null when there is none: films use `chromium` itself.
 */
export function findHeadlessShell(chromium: string): string | null {
  if (isHeadlessShell(chromium)) return chromium;
  const dir = dirname(chromium);
  const candidates = [
    join(dir, "..", "lib", "chromium", "chromium-headless-shell"),
    join(dir, "chromium-headless-shell"),
    join(dir, "chrome-headless-shell"),
  ];
  return candidates.find((file) => existsSync(file)) ?? null;
}

/**
 * The browser that films on this host: on a CPU host the headless shell beside Chromium when there is
 * one and RENDER_HEADLESS_SHELL is not off; Chromium itself on a GPU host (RENDER_GPU=1), where the
 * shell's GPU path has not been proven. Null when there is no Chromium.
 */
export function findFilmBrowser(config: {
  chromiumPath: string | null;
  renderGpu: boolean;
  renderHeadlessShell: boolean;
}): string | null {
  const chromium = findBrowser(config.chromiumPath);
  if (!chromium || config.renderGpu || !config.renderHeadlessShell) return chromium;
  return findHeadlessShell(chromium) ?? chromium;
}
