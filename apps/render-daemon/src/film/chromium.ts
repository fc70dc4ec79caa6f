import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

const COMMON_FLAGS = [
  "--no-sandbox",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-dev-shm-usage",
  "--mute-audio",
  "--hide-scrollbars",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider",
];

/** The launch flags: SwiftShader WebGL on CPU hosts, the GPU's ANGLE backend when `gpu` is set. */
export function chromiumFlags(gpu: boolean): string[] {
  const graphics = gpu
    ? [
        "--use-angle=vulkan",
        "--enable-features=Vulkan",
        "--disable-vulkan-surface",
        "--enable-gpu",
        "--ignore-gpu-blocklist",
      ]
    : ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"];
  return [...COMMON_FLAGS, ...graphics];
}

/** A launched Chromium with its own throwaway profile directory, removed on close. */
export type LaunchedBrowser = { browser: Browser; close(): Promise<void> };

/** Launches headless Chromium with the project's flags and a fresh temp profile. */
export async function launchChromium(executablePath: string, gpu: boolean): Promise<LaunchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "render-chromium-"));
  try {
    const browser = await puppeteer.launch({
      executablePath,
      headless: true,
      args: [...chromiumFlags(gpu), `--user-data-dir=${profile}`],
      protocolTimeout: 60_000,
    });
    return {
      browser,
      close: async () => {
        try {
          await browser.close();
        } catch {
          browser.process()?.kill("SIGKILL");
        } finally {
          rmSync(profile, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
