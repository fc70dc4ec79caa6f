import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBrowser } from "@site/browser";
import { ESCAPES, type Forbidden, serveEscapes, serveForbidden } from "@site/browser/testing";
import { createLogger, loadConfig } from "@site/config";
import { createRenderPipeline } from "../pipeline.ts";
import type { CaptureSettings, RenderPipeline } from "../render_types.ts";

setDefaultTimeout(120_000);

// The page's host is allowed (FETCH_ALLOW_HOSTS, as in film_test); the forbidden service on another
// loopback port is not. Whatever the page does, through whichever browser API, the service must see no
// connection at all, and the film's warnings must name what was refused.
describe.skipIf(!findBrowser(null))(
  "every connection a filmed page makes goes through the address guard",
  () => {
    let forbidden: Forbidden;
    let site: ReturnType<typeof serveEscapes>;
    let pipeline: RenderPipeline;
    const dataDir = mkdtempSync(join(tmpdir(), "egress-test-"));

    beforeAll(async () => {
      forbidden = await serveForbidden();
      site = serveEscapes(forbidden);
      const config = {
        ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: "egress-test-secret-key" }),
        renderConcurrency: 1,
      };
      config.fetchAllowHosts = [`127.0.0.1:${site.port}`];
      pipeline = await createRenderPipeline({ config, log: createLogger("error") });
    });

    afterAll(async () => {
      await pipeline?.close();
      site?.server.stop(true);
      await forbidden?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const settings = (path: string): CaptureSettings => ({
      url: `${site.origin}${path}`,
      viewportWidth: 640,
      viewportHeight: 400,
      deviceScaleFactor: 1,
      fullPage: false,
      theme: "light",
    });

    test.each(ESCAPES.filter((k) => k !== "webrtc"))(
      "%s: the forbidden service sees no connection and the warnings name it",
      async (kind) => {
        const before = forbidden.accepted();
        const cap = await pipeline.film(settings(`/escape/${kind}`));
        // The attempt was made and ended (the page reported), and nothing was read from the service.
        expect(site.reports.get(kind)).toBeDefined();
        expect(site.reports.get(kind)).not.toContain("internal-token");
        expect(site.reports.get(kind)).not.toContain("open");
        expect(forbidden.accepted()).toBe(before);
        expect(cap.warnings.join(" ")).toContain(`127.0.0.1:${forbidden.port}`);
      },
    );

    test("webrtc: ICE checks to a forbidden address reach it neither over UDP nor over TCP", async () => {
      const before = forbidden.accepted();
      const cap = await pipeline.film(settings("/escape/webrtc"));
      expect(site.reports.get("webrtc")).toBeDefined();
      expect(forbidden.datagrams()).toBe(0);
      expect(forbidden.accepted()).toBe(before);
      // ICE over TCP is sent to the proxy as a CONNECT, and refused there.
      expect(cap.warnings.join(" ")).toContain(`127.0.0.1:${forbidden.port}`);
    });
  },
);
