import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Each app refuses to start in production with a test hook set (decision 1521): the process exits before
 * it opens anything, its error naming the setting. Spawned as operators start them (`bun run apps/…`).
 */
const ROOT = join(import.meta.dir, "..", "..");

describe("the apps refuse test hooks when NODE_ENV=production", () => {
  for (const app of ["api", "render-daemon", "metrics"])
    test(`${app} exits at boot naming FETCH_ALLOW_HOSTS`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), `hook-${app}-`));
      const child = Bun.spawn([process.execPath, join(ROOT, "apps", app, "src", "main.ts")], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          NODE_ENV: "production",
          DATA_DIR: dataDir,
          SECRET_KEY: "0123456789abcdef0123",
          FETCH_ALLOW_HOSTS: "127.0.0.1:8443",
          PORT: "0",
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      const timer = setTimeout(() => child.kill(), 20_000);
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      clearTimeout(timer);
      expect(code).not.toBe(0);
      expect(stderr).toContain(
        "FETCH_ALLOW_HOSTS=127.0.0.1:8443 exempts hosts from the private-address guard",
      );
      expect(stderr).toContain("refused when NODE_ENV=production");
    });
});
