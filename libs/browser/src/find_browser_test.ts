import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFilmBrowser, findHeadlessShell, isHeadlessShell } from "./find_browser.ts";

// A host's layout in a temporary tree: Debian's (/usr/bin/chromium, the shell in /usr/lib/chromium with a
// wrapper script in /usr/bin) and Chrome for Testing's (chrome-headless-shell beside chrome).
const root = mkdtempSync(join(tmpdir(), "find-browser-"));
const file = (path: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), "#!/bin/sh\n", { mode: 0o755 });
  return join(root, path);
};
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the browser that films", () => {
  test("a headless shell is told by its name", () => {
    expect(isHeadlessShell("/usr/lib/chromium/chromium-headless-shell")).toBe(true);
    expect(isHeadlessShell("/opt/chrome/chrome-headless-shell")).toBe(true);
    expect(isHeadlessShell("/opt/chrome/headless_shell")).toBe(true);
    expect(isHeadlessShell("/usr/bin/chromium")).toBe(false);
    expect(isHeadlessShell("/opt/headless-shell/chrome")).toBe(false);
  });

  test("Debian: the binary in the library directory, not the wrapper script beside chromium", () => {
    const chromium = file("debian/usr/bin/chromium");
    file("debian/usr/bin/chromium-headless-shell");
    file("debian/usr/lib/chromium/chromium-headless-shell");
    expect(findHeadlessShell(chromium)).toBe(
      join(root, "debian/usr/bin/../lib/chromium/chromium-headless-shell"),
    );
  });

  test("Chrome for Testing: chrome-headless-shell beside the browser; none: null", () => {
    expect(findHeadlessShell(file("cft/chrome"))).toBeNull();
    file("cft/chrome-headless-shell");
    expect(findHeadlessShell(join(root, "cft/chrome"))).toBe(join(root, "cft/chrome-headless-shell"));
  });

  test("CHROMIUM_PATH naming a shell films with it", () => {
    const shell = file("only/chrome-headless-shell");
    expect(findHeadlessShell(shell)).toBe(shell);
    expect(findFilmBrowser({ chromiumPath: shell, renderGpu: false, renderHeadlessShell: true })).toBe(shell);
  });

  test("the shell on a CPU host; Chromium itself on a GPU host, with the setting off, or without a shell", () => {
    const chromium = file("pick/usr/bin/chromium");
    const cpu = { chromiumPath: chromium, renderGpu: false, renderHeadlessShell: true };
    expect(findFilmBrowser(cpu)).toBe(chromium);
    file("pick/usr/lib/chromium/chromium-headless-shell");
    expect(findFilmBrowser(cpu)).toBe(join(root, "pick/usr/bin/../lib/chromium/chromium-headless-shell"));
    expect(findFilmBrowser({ ...cpu, renderGpu: true })).toBe(chromium);
    expect(findFilmBrowser({ ...cpu, renderHeadlessShell: false })).toBe(chromium);
    expect(findFilmBrowser({ ...cpu, chromiumPath: join(root, "missing/chromium") })).toBeNull();
  });
});
