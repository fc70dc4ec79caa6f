import { describe, expect, test } from "bun:test";
import { join } from "node:path";

// `docker compose config` validates the compose file where Docker Compose exists; elsewhere the script
// says why it skipped, and so does this test.
const ROOT = join(import.meta.dir, "..", "..");
const run = Bun.spawnSync(["bash", "scripts/check_compose.sh"], {
  cwd: ROOT,
  stdout: "pipe",
  stderr: "pipe",
});
const skipped = run.exitCode === 77;
if (skipped) console.log(`compose_test: ${run.stderr.toString().trim()}`);

describe("infra/compose.yaml", () => {
  test.skipIf(skipped)("docker compose config accepts it, with and without the monitoring profile", () => {
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toContain("profile monitoring");
  });

  test("names a Dockerfile that exists for each of our services, and a health check for each", async () => {
    const compose = Bun.YAML.parse(await Bun.file(join(ROOT, "infra/compose.yaml")).text()) as {
      services: Record<string, { build?: { dockerfile: string }; healthcheck?: { test: string[] } }>;
    };
    const ours = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(ours.map(([name]) => name).sort()).toEqual([
      "api",
      "metrics",
      "render-daemon-1",
      "render-daemon-2",
    ]);
    for (const [name, s] of ours) {
      expect(
        await Bun.file(join(ROOT, s.build!.dockerfile)).exists(),
        `${name}: ${s.build!.dockerfile}`,
      ).toBe(true);
      expect(s.healthcheck?.test.join(" "), name).toContain("/readyz");
    }
    expect(compose.services.metrics!.build!.dockerfile).toBe("infra/docker/metrics.Dockerfile");
  });
});
