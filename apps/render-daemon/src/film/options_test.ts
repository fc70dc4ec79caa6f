import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURE_MAGENTA, serveSettlePages } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import { decodeImage } from "../frame/encode.ts";
import { createRenderPipeline } from "../pipeline.ts";
import type { Capture, CaptureSettings, RenderPipeline } from "../render_types.ts";
import { isAdRequest } from "./ad_block.ts";

setDefaultTimeout(120_000);

const pages = serveSettlePages();
const dataDir = mkdtempSync(join(tmpdir(), "options-test-"));
let pipeline: RenderPipeline;

beforeAll(async () => {
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "options-test-secret-key" }),
    renderConcurrency: 1,
  };
  config.fetchAllowHosts = [pages.host];
  pipeline = await createRenderPipeline({ config, log: createLogger("error"), warm: false });
});

afterAll(async () => {
  await pipeline?.close();
  pages.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const film = (path: string, extra: Partial<CaptureSettings> = {}) =>
  pipeline.film({
    url: pages.url(path),
    viewportWidth: 800,
    viewportHeight: 700,
    deviceScaleFactor: 1,
    fullPage: false,
    theme: "light",
    ...extra,
  });

async function count(c: Capture, rgb: [number, number, number]) {
  const img = await decodeImage(c.png);
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const d =
      Math.abs(img.data[i] - rgb[0]) +
      Math.abs(img.data[i + 1] - rgb[1]) +
      Math.abs(img.data[i + 2] - rgb[2]);
    if (d < 40) n++;
  }
  return n;
}

const GREEN: [number, number, number] = [0, 255, 0];
const BLUE: [number, number, number] = [0, 0, 255];
const CYAN: [number, number, number] = [0, 255, 255];

describe("capture options", () => {
  test("hideSelectors hides each matching element; an invalid selector is a warning", async () => {
    const shown = await film("/selector");
    expect(await count(shown, GREEN)).toBeGreaterThan(800 * 140);
    expect(await count(shown, BLUE)).toBeGreaterThan(800 * 140);
    const hidden = await film("/selector", { hideSelectors: [".promo", "#ad-slot", "div["] });
    expect(await count(hidden, GREEN)).toBe(0);
    expect(await count(hidden, BLUE)).toBe(0);
    expect(hidden.warnings).toContain('hideSelectors "div[" is not a valid CSS selector; it was ignored');
  });

  test("waitForSelector films once the element is visible; one that never comes is a warning", async () => {
    // the box comes 5 s after load: longer than a short timer, so settling alone does not wait for it
    const plain = await film("/selector");
    expect(await count(plain, FIXTURE_MAGENTA)).toBe(0);
    const waited = await film("/selector", { waitForSelector: "#late-box" });
    expect(await count(waited, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
    expect(waited.warnings).toEqual([]);
    const never = await film("/static", { waitForSelector: "#never-there" });
    expect(never.warnings).toContain(
      'waitForSelector "#never-there" matched no visible element within 10 s; the page was filmed without it',
    );
    expect(await count(never, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
  });

  test("delayMs waits after settling: the late box is in the capture", async () => {
    const delayed = await film("/selector", { delayMs: 7000 });
    expect(await count(delayed, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
  });

  test("cookie banners are dismissed by default (autoconsent opts out), and kept when asked", async () => {
    const kept = await film("/consent", { hideCookieBanners: false });
    expect(await count(kept, CYAN)).toBeGreaterThan(800 * 150);
    const dismissed = await film("/consent");
    expect(await count(dismissed, CYAN)).toBe(0);
    expect(dismissed.warnings).toEqual([]);
  });

  test("blockAds refuses requests to advertising hosts before they reach the network guard", async () => {
    const plain = await film("/ads");
    expect(plain.warnings.join("\n")).toContain("ad.doubleclick.net");
    const blocked = await film("/ads", { blockAds: true });
    expect(blocked.warnings.join("\n")).not.toContain("ad.doubleclick.net");
    expect(await count(blocked, FIXTURE_MAGENTA)).toBeGreaterThan(800 * 190);
  });

  test("the ad filters are Ghostery's advertising entries: ad hosts match, the page's own requests do not", () => {
    expect(isAdRequest("https://ad.doubleclick.net/ddm/ad.js", "https://shop.example/", "script")).toBe(true);
    expect(
      isAdRequest("https://securepubads.g.doubleclick.net/tag/js/gpt.js", "https://shop.example/", "script"),
    ).toBe(true);
    expect(isAdRequest("https://shop.example/app.js", "https://shop.example/", "script")).toBe(false);
    expect(isAdRequest("https://cdn.example.net/hero.png", "https://shop.example/", "image")).toBe(false);
  });
});

describe("fonts", () => {
  const hostHas = (family: string) =>
    Bun.spawnSync(["fc-list", ":", "family"]).stdout.toString().toLowerCase().includes(family.toLowerCase());

  test("a family the host lacks is named in a warning; a system-UI stack is not; emoji and CJK are warned about only without a font", async () => {
    const c = await film("/fonts-missing");
    const text = c.warnings.join("\n");
    expect(c.warnings).toContain(
      "the page asked for fonts this host does not have (Quixotic Nonexistent Grotesk); a fallback font was drawn",
    );
    expect(text).not.toContain("Segoe UI");
    expect(text.includes("no emoji font")).toBe(!hostHas("Noto Color Emoji"));
    expect(text.includes("Chinese, Japanese or Korean")).toBe(!hostHas("Noto Sans CJK"));
  });
});
