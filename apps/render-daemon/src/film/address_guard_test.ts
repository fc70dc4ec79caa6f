import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findBrowser } from "@site/domain";
import { answeredFromBlockedAddress, isBlockedAddress, type UrlGuard } from "./address_guard.ts";
import { FilmError, filmPage } from "./capture.ts";
import { type LaunchedBrowser, launchChromium } from "./chromium.ts";

const opts = { isBlocked: isBlockedAddress, allowHosts: ["127.0.0.1:8443"] };

describe("a response is re-checked against the address Chromium connected to (DNS rebinding)", () => {
  test.each([
    ["https://shop.example/", "10.0.0.7", true],
    ["https://shop.example/", "169.254.169.254", true],
    ["https://shop.example/", "127.0.0.1", true],
    ["https://shop.example/", "[::1]", true],
    ["https://shop.example/", "::ffff:192.168.1.1", true],
    ["https://shop.example/", "93.184.216.34", false],
    ["https://127.0.0.1:8443/", "127.0.0.1", false], // allow-listed host:port (tests only)
    ["https://shop.example/", undefined, false], // cache, data: or service worker: no connection
    ["data:text/plain,hi", "127.0.0.1", false],
  ] as const)("%s answered from %s → blocked %p", (url, ip, blocked) => {
    expect(answeredFromBlockedAddress(url, ip, opts)).toBe(blocked);
  });
});

const chromium = findBrowser(null);

describe.skipIf(!chromium)("filming discards a page served from a non-public address", () => {
  let launched: LaunchedBrowser;
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Response("<!doctype html><h1>internal admin</h1>", { headers: { "content-type": "text/html" } }),
  });
  beforeAll(async () => {
    launched = await launchChromium(chromium!, false);
  });
  afterAll(async () => {
    await launched.close();
    site.stop(true);
  });

  test("a host that passed the check but was reached on loopback yields no capture", async () => {
    // As if the host's DNS answered a public address to our check and 127.0.0.1 to Chromium's lookup.
    const guard: UrlGuard = Object.assign(async () => true, {
      answeredFromBlocked: (url: string, ip: string | undefined) =>
        answeredFromBlockedAddress(url, ip, { isBlocked: isBlockedAddress, allowHosts: [] }),
    });
    const context = await launched.browser.createBrowserContext();
    const page = await context.newPage();
    try {
      const filmed = filmPage(
        page,
        context,
        {
          url: `http://127.0.0.1:${site.port}/`,
          viewportWidth: 640,
          viewportHeight: 400,
          deviceScaleFactor: 1,
          fullPage: false,
          theme: "light",
        },
        guard,
      );
      await expect(filmed).rejects.toThrow(FilmError);
      await expect(filmed).rejects.toThrow(/non-public address/);
      await filmed.catch((err: FilmError) => expect(err.permanent).toBe(true));
    } finally {
      await page.close().catch(() => {});
      await context.close().catch(() => {});
    }
  }, 60_000);
});
