import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// An Ed25519 DKIM key without an RSA key: the sending process refuses to start, naming the setting
// (CONTRACT "Mail replies…": the largest mailbox providers verify only RSA; decision 1453).

const ROOT = new URL("../../../..", import.meta.url).pathname;

describe("DKIM at start", () => {
  test("DKIM_PRIVATE_KEY_FILE with an Ed25519 key alone: the sender process exits non-zero naming DKIM_PRIVATE_KEY_FILE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dkim-start-"));
    try {
      const file = join(dir, "ed.pem");
      writeFileSync(
        file,
        generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string,
      );
      const proc = Bun.spawn(["bun", "libs/domain/testing/newsletter_sender_child.ts"], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: dir,
          DATABASE_URL: "postgres://postgres@127.0.0.1:9/none",
          REDIS_URL: "",
          SECRET_KEY: "test-secret-key-0123456789",
          DKIM_DOMAIN: "news.example.test",
          DKIM_SELECTOR: "ed2026",
          DKIM_PRIVATE_KEY_FILE: file,
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      const code = await proc.exited;
      const out = `${await new Response(proc.stdout).text()}${await new Response(proc.stderr).text()}`;
      expect(code).not.toBe(0);
      expect(out).not.toContain("ready");
      expect(out).toContain("DKIM_PRIVATE_KEY_FILE");
      expect(out).toContain("Ed25519");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
