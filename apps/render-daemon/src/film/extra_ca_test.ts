import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createUrlGuard,
  findBrowser,
  findFilmBrowser,
  hasCertutil,
  isBlockedAddress,
  type LaunchedBrowser,
  launchChromium,
} from "@site/browser";
import { createLogger, loadConfig } from "@site/config";
import { createTlsFixture } from "@site/net/testing";
import { decodeImage } from "../frame/encode.ts";
import type { Capture, CaptureSettings } from "../render_types.ts";
import { filmPage } from "./capture.ts";

setDefaultTimeout(120_000);

const PAGE = `<!doctype html><html><body style="margin:0;background:#00ff00"><h1>staging</h1></body></html>`;

// Both browsers a render host runs: Chromium (the compositor, hosted sign-in, GPU hosts) and the headless
// shell that films on a CPU host where one is installed (decision 1214).
const chromium = findBrowser(null);
const shell = findFilmBrowser({ chromiumPath: null, renderGpu: false, renderHeadlessShell: true });
const browsers = [["Chromium", chromium], ...(shell !== chromium ? [["the headless shell", shell]] : [])];

// A staging site behind a company CA: imports trust NODE_EXTRA_CA_CERTS, and so must the render host.
for (const [name, executable] of browsers)
  describe.skipIf(!executable || !hasCertutil())(
    `the render host trusts NODE_EXTRA_CA_CERTS (${name})`,
    () => {
      const dir = mkdtempSync(join(tmpdir(), "extra-ca-test-"));
      const company = createTlsFixture();
      const stranger = createTlsFixture();
      const caFile = join(dir, "company-ca.pem");
      writeFileSync(caFile, company.ca);
      const serve = (cert: string, key: string) =>
        Bun.serve({
          hostname: "127.0.0.1",
          port: 0,
          tls: { cert, key },
          fetch: () => new Response(PAGE, { headers: { "content-type": "text/html" } }),
        });
      // The usual server: only its own certificate, the root is the client's business.
      const staging = serve(company.cert, company.key);
      // An impostor that also presents the company CA's (public) certificate in its chain.
      const impostor = serve(stranger.cert + company.ca, stranger.key);
      // The pool's launch options, as pipeline_impl passes them from the configuration.
      let trusting: LaunchedBrowser;
      let plain: LaunchedBrowser;
      let film: (s: CaptureSettings) => Promise<Capture>;

      beforeAll(async () => {
        const config = loadConfig({
          DATA_DIR: join(dir, "data"),
          SECRET_KEY: "extra-ca-test-secret-key",
          NODE_EXTRA_CA_CERTS: caFile,
          FETCH_ALLOW_HOSTS: `127.0.0.1:${staging.port},127.0.0.1:${impostor.port}`,
        });
        expect(config.extraCaFile).toBe(caFile);
        trusting = await launchChromium(executable as string, {
          gpu: false,
          allowHosts: config.fetchAllowHosts,
          extraCaFile: config.extraCaFile,
          log: createLogger("error"),
        });
        const guard = createUrlGuard({ isBlocked: isBlockedAddress, allowHosts: config.fetchAllowHosts });
        film = async (s) => {
          const context = await trusting.browser.createBrowserContext();
          const page = await context.newPage();
          try {
            return await filmPage(page, context, s, guard);
          } finally {
            await context.close().catch(() => {});
          }
        };
        plain = await launchChromium(executable as string, {
          gpu: false,
          allowHosts: [`127.0.0.1:${staging.port}`],
        });
      });

      afterAll(async () => {
        await trusting?.close();
        await plain?.close();
        staging.stop(true);
        impostor.stop(true);
        rmSync(dir, { recursive: true, force: true });
      });

      const settings = (port: number): CaptureSettings => ({
        url: `https://127.0.0.1:${port}/`,
        viewportWidth: 320,
        viewportHeight: 200,
        deviceScaleFactor: 1,
        fullPage: false,
        theme: "light",
      });

      test("a page whose chain ends at the extra CA is filmed", async () => {
        const cap = await film(settings(staging.port!));
        expect(cap.warnings).toEqual([]);
        const img = await decodeImage(cap.png);
        expect([img.data[0], img.data[1], img.data[2]]).toEqual([0, 255, 0]);
      });

      test("without the setting the same page fails on its certificate", async () => {
        const page = await plain.browser.newPage();
        try {
          await expect(page.goto(`https://127.0.0.1:${staging.port}/`)).rejects.toThrow(
            /ERR_CERT_AUTHORITY_INVALID/,
          );
        } finally {
          await page.close();
        }
      });

      test("the CA is trusted as a root, not as a pass: a chain that merely contains it still fails", async () => {
        await expect(film(settings(impostor.port!))).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
      });
    },
  );
