import { X509Certificate } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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

/** Runs certutil without blocking the event loop (a system bundle is 100+ certificates, a run each). */
async function certutil(args: string[]): Promise<void> {
  const proc = Bun.spawn(["certutil", ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new ExtraCaError(`certutil ${args[0]} failed: ${stderr.trim().slice(0, 200)}`);
}

/**
 * Makes `<home>/.pki/nssdb`, the NSS database Chromium on Linux reads from $HOME, trusting each CA for
 * TLS server authentication only ("C,,"). Chromium launched with HOME=<home> then verifies chains to
 * these roots as it does for public ones: names, dates and constraints still apply.
 */
export async function writeNssTrust(home: string, pems: readonly string[]): Promise<void> {
  if (!hasCertutil()) throw new ExtraCaError("certutil not found (install libnss3-tools)");
  const db = join(home, ".pki", "nssdb");
  mkdirSync(db, { recursive: true, mode: 0o700 });
  await certutil(["-N", "-d", `sql:${db}`, "--empty-password"]);
  // one after another: each run writes the same SQLite database
  for (const [i, pem] of pems.entries()) {
    const file = join(home, `extra-ca-${i}.pem`);
    writeFileSync(file, pem);
    try {
      await certutil(["-A", "-d", `sql:${db}`, "-n", `extra-ca-${i}`, "-t", "C,,", "-a", "-i", file]);
    } finally {
      rmSync(file, { force: true });
    }
  }
}

const templates = new Map<string, Promise<string>>();

/**
 * A HOME whose NSS database trusts the bundle's CAs, built once per process and bundle version (path,
 * size, modification time) in a directory this process owns (removed at exit, or swept as an orphan
 * profile after a crash): every browser launch copies its database instead of running certutil once
 * per certificate again (3 s of a blocked process for a 140-certificate system bundle).
 */
export function nssTrustTemplate(file: string, makeDir: () => string): Promise<string> {
  let key: string;
  try {
    const st = statSync(file);
    key = `${file}|${st.size}|${st.mtimeMs}`;
  } catch (err) {
    return Promise.reject(new ExtraCaError(`cannot read ${file}: ${(err as Error).message}`));
  }
  let built = templates.get(key);
  if (!built) {
    built = (async () => {
      const pems = readCaBundle(file);
      const dir = makeDir();
      const home = join(dir, "home");
      try {
        await writeNssTrust(home, pems);
      } catch (err) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      return home;
    })();
    templates.set(key, built);
    // a failure (no certutil yet, a bundle being rewritten) is tried again by the next launch
    built.catch(() => templates.delete(key));
  }
  return built;
}

/** Gives `home` a copy of a template's NSS database (see nssTrustTemplate). */
export function copyNssTrust(template: string, home: string): void {
  cpSync(join(template, ".pki"), join(home, ".pki"), { recursive: true });
}
