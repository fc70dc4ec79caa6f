import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway certificate authority and a server certificate it signed, for HTTPS fixtures in tests. */
export type TlsFixture = { ca: string; cert: string; key: string };

function openssl(args: string[], cwd: string): void {
  const out = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${out.stderr.toString()}`);
}

/**
 * Generates (with openssl) a CA and a certificate for localhost, 127.0.0.1 and ::1; `expired` makes the
 * certificate one that was valid for a day in 2020.
 */
export function createTlsFixture(opts: { expired?: boolean } = {}): TlsFixture {
  const dir = mkdtempSync(join(tmpdir(), "tls-fixture-"));
  try {
    openssl(
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1"]
        .concat(["-subj", "/CN=Test Fixture CA", "-addext", "basicConstraints=critical,CA:TRUE"])
        .concat(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]),
      dir,
    );
    openssl(
      [
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "srv.key",
        "-out",
        "srv.csr",
        "-subj",
        "/CN=localhost",
      ],
      dir,
    );
    writeFileSync(
      join(dir, "ext.cnf"),
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    );
    if (opts.expired) {
      // `openssl ca` is the one 3.0 command that takes explicit validity dates.
      writeFileSync(join(dir, "index.txt"), "");
      writeFileSync(join(dir, "serial"), "01\n");
      writeFileSync(
        join(dir, "ca.cnf"),
        "[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n",
      );
      openssl(
        [
          "ca",
          "-batch",
          "-config",
          "ca.cnf",
          "-cert",
          "ca.pem",
          "-keyfile",
          "ca.key",
          "-in",
          "srv.csr",
        ].concat([
          "-out",
          "srv.pem",
          "-notext",
          "-startdate",
          "20200101000000Z",
          "-enddate",
          "20200102000000Z",
          "-extfile",
          "ext.cnf",
        ]),
        dir,
      );
    } else {
      openssl(
        ["x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
          "-out",
          "srv.pem",
          "-days",
          "1",
          "-extfile",
          "ext.cnf",
        ]),
        dir,
      );
    }
    const read = (f: string) => readFileSync(join(dir, f), "utf8");
    return { ca: read("ca.pem"), cert: read("srv.pem"), key: read("srv.key") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
