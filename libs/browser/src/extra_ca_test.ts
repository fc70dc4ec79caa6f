import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTlsFixture } from "@site/net/testing";
import { copyNssTrust, ExtraCaError, hasCertutil, nssTrustTemplate } from "./extra_ca.ts";

const root = mkdtempSync(join(tmpdir(), "nss-template-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let made = 0;
const makeDir = () => mkdtempSync(join(root, `template-${++made}-`));

describe.skipIf(!hasCertutil())("the NSS trust database for NODE_EXTRA_CA_CERTS", () => {
  // A bundle of a dozen authorities: certutil runs once per certificate.
  const bundle = join(root, "bundle.pem");
  writeFileSync(bundle, Array.from({ length: 12 }, () => createTlsFixture().ca).join("\n"));

  test("is built once per bundle version and copied into each browser's HOME", async () => {
    const before = made;
    // while it is built the process keeps serving: certutil runs without blocking the event loop
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const template = await nssTrustTemplate(bundle, makeDir);
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(0);
    expect(await nssTrustTemplate(bundle, makeDir)).toBe(template);
    expect(made).toBe(before + 1);

    const home = join(root, "browser-home");
    copyNssTrust(template, home);
    expect(readdirSync(join(home, ".pki", "nssdb")).sort()).toEqual(
      readdirSync(join(template, ".pki", "nssdb")).sort(),
    );
    // the copy holds all twelve, trusted for TLS servers only
    const list = Bun.spawnSync([
      "certutil",
      "-L",
      "-d",
      `sql:${join(home, ".pki", "nssdb")}`,
    ]).stdout.toString();
    expect(list.match(/^extra-ca-\d+\s+C,,\s*$/gm)).toHaveLength(12);

    // an edited bundle is a new version: built again
    utimesSync(bundle, new Date(), new Date(Date.now() + 5000));
    const again = await nssTrustTemplate(bundle, makeDir);
    expect(again).not.toBe(template);
    expect(made).toBe(before + 2);
    expect(existsSync(join(again, ".pki", "nssdb"))).toBe(true);
  }, 60_000);

  test("a missing or empty bundle is an ExtraCaError, never a crash", async () => {
    await expect(nssTrustTemplate(join(root, "absent.pem"), makeDir)).rejects.toBeInstanceOf(ExtraCaError);
    const empty = join(root, "empty.pem");
    writeFileSync(empty, "no certificates here\n");
    await expect(nssTrustTemplate(empty, makeDir)).rejects.toBeInstanceOf(ExtraCaError);
  });
});
