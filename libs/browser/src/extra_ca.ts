import { X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The extra authorities could not be given to Chromium (no certutil, or a file that holds no certificate). */
export class ExtraCaError extends Error {}

/** The CA certificates (PEM) of a bundle such as NODE_EXTRA_CA_CERTS; each one parsed, never trusted blindly. */
export function readCaBundle(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ExtraCaError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (pems.length === 0) throw new ExtraCaError(`${file} holds no PEM certificate`);
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new ExtraCaError(`${file} holds a certificate that does not parse`);
    }
  }
  return pems;
}

/** True when NSS's certutil (Debian: libnss3-tools) is on PATH. */
export function hasCertutil(): boolean {
  return Bun.which("certutil") !== null;
}

function certutil(args: string[]): void {
  const out = Bun.spawnSync(["certutil", ...args], { stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0)
    throw new ExtraCaError(`certutil ${args[0]} failed: ${out.stderr.toString().trim().slice(0, 200)}`);
}

/**
 * Makes `<home>/.pki/nssdb`, the NSS database Chromium on Linux reads from $HOME, trusting each CA for
 * TLS server authentication only ("C,,"). Chromium launched with HOME=<home> then verifies chains to
 * these roots as it does for public ones: names, dates and constraints still apply.
 */
export function writeNssTrust(home: string, pems: readonly string[]): void {
  if (!hasCertutil()) throw new ExtraCaError("certutil not found (install libnss3-tools)");
  const db = join(home, ".pki", "nssdb");
  mkdirSync(db, { recursive: true, mode: 0o700 });
  certutil(["-N", "-d", `sql:${db}`, "--empty-password"]);
  pems.forEach((pem, i) => {
    const file = join(home, `extra-ca-${i}.pem`);
    writeFileSync(file, pem);
    try {
      certutil(["-A", "-d", `sql:${db}`, "-n", `extra-ca-${i}`, "-t", "C,,", "-a", "-i", file]);
    } finally {
      rmSync(file, { force: true });
    }
  });
}
