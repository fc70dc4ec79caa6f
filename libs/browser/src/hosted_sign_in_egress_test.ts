import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig } from "@site/config";
import { ESCAPES, type Forbidden, serveEscapes, serveForbidden, until } from "../testing/mod.ts";
import { findBrowser } from "./find_browser.ts";
import { openHostedBrowser } from "./hosted_sign_in.ts";

// The hosted sign-in browser shows an owner-chosen page for up to an hour: it runs behind the same
// egress proxy as filming, so nothing the page starts reaches a non-allowed address.
describe.skipIf(!findBrowser(null))("the hosted sign-in browser reaches only what the guard allows", () => {
  let forbidden: Forbidden;
  let site: ReturnType<typeof serveEscapes>;
  const dataDir = mkdtempSync(join(tmpdir(), "hosted-egress-test-"));

  beforeAll(async () => {
    forbidden = await serveForbidden();
    site = serveEscapes(forbidden);
  });
  afterAll(async () => {
    site?.server.stop(true);
    await forbidden?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test.each([...ESCAPES])(
    "%s: the attempt ends and the forbidden service sees nothing",
    async (kind) => {
      const config = loadConfig({
        DATA_DIR: dataDir,
        SECRET_KEY: "hosted-egress-test-secret",
        FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      });
      const hosted = await openHostedBrowser({
        config,
        log: createLogger("error"),
        url: `${site.origin}/escape/${kind}`,
      });
      try {
        const said = await until(async () => site.reports.get(kind), 20_000);
        expect(said).not.toContain("internal-token");
        expect(forbidden.accepted()).toBe(0);
        expect(forbidden.datagrams()).toBe(0);
      } finally {
        await hosted.close();
      }
    },
    60_000,
  );
});
