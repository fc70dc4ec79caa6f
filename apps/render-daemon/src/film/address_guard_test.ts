import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  addressCheckFor,
  findBrowser,
  type LaunchedBrowser,
  launchChromium,
  type UrlGuard,
} from "@site/browser";
import { createTlsFixture } from "@site/net/testing";
import { PermanentJobError } from "@site/queue";
import type { CaptureSettings } from "../render_types.ts";
import { filmPage } from "./capture.ts";

const chromium = findBrowser(null);

describe("the browser's address check follows ALLOW_LOCAL_NETWORK_FOR_DEVELOPMENT", () => {
  test("off: loopback and private are blocked; on: only link-local, multicast and the like stay blocked", () => {
    const off = addressCheckFor({ allowLocalNetworkForDevelopment: false });
    const on = addressCheckFor({ allowLocalNetworkForDevelopment: true });
    for (const ip of ["127.0.0.1", "192.168.1.20", "::1"]) {
      expect(off(ip), ip).toBe(true);
      expect(on(ip), ip).toBe(false);
    }
    for (const ip of ["169.254.169.254", "fe80::1", "224.0.0.1"]) expect(on(ip), ip).toBe(true);
    expect(on("8.8.8.8")).toBe(false);
  });
});

// DNS rebinding: the page-level check was told a public address (this guard says yes to everything), then
// the host resolves to loopback. The egress proxy resolves once itself, refuses, and never connects.
describe.skipIf(!chromium)(
  "a page whose host passed the page check but is not public is never reached",
  () => {
    let launched: LaunchedBrowser;
    let hits = 0;
    const tls = createTlsFixture();
    const handler = () => {
      hits++;
      return new Response("<!doctype html><h1>internal admin</h1>", {
        headers: { "content-type": "text/html" },
      });
    };
    const plain = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler });
    const secure = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: tls.cert, key: tls.key },
      fetch: handler,
    });
    const fooled: UrlGuard = async () => true;
    const settings = (url: string): CaptureSettings => ({
      url,
      viewportWidth: 640,
      viewportHeight: 400,
      deviceScaleFactor: 1,
      fullPage: false,
      theme: "light",
    });

    beforeAll(async () => {
      // The proxy's resolver answers loopback for the rebinding name; nothing is exempt.
      launched = await launchChromium(chromium!, {
        gpu: false,
        allowHosts: [],
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      });
    });
    afterAll(async () => {
      await launched.close();
      plain.stop(true);
      secure.stop(true);
    });

    test.each([
      ["plain HTTP, a literal loopback address", () => `http://127.0.0.1:${plain.port}/`],
      ["plain HTTP, a name that rebinds to loopback", () => `http://rebind.example:${plain.port}/`],
      ["https (CONNECT), a name that rebinds to loopback", () => `https://rebind.example:${secure.port}/`],
    ])(
      "%s: no capture, a permanent error, no connection",
      async (_name, url) => {
        hits = 0;
        const context = await launched.browser.createBrowserContext();
        const page = await context.newPage();
        try {
          const filmed = filmPage(page, context, settings(url()), fooled);
          await expect(filmed).rejects.toBeInstanceOf(PermanentJobError);
          await expect(filmed).rejects.toThrow(/not public/);
          expect(hits).toBe(0);
        } finally {
          await page.close().catch(() => {});
          await context.close().catch(() => {});
        }
      },
      60_000,
    );
  },
);
