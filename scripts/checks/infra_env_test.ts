import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SETTINGS } from "@site/config";

// Every setting the deployment files give our processes must be one the service declares (libs/config's
// settings table, which the parser reads through) and documents (.env.example, written from that table):
// a typo in a manifest otherwise fails silently, as a default.
const ROOT = join(import.meta.dir, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Read by the container runtime, not by our processes. */
const PLATFORM = new Set(["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"]);

/** The environment names our own services get in infra/compose.yaml (services built from our Dockerfiles). */
function composeNames(): Map<string, string> {
  const compose = Bun.YAML.parse(read("infra/compose.yaml")) as {
    services: Record<string, { build?: unknown; environment?: Record<string, unknown> | string[] }>;
  };
  const out = new Map<string, string>();
  for (const [service, s] of Object.entries(compose.services)) {
    if (!s.build) continue;
    const env = Array.isArray(s.environment)
      ? s.environment.map((e) => e.split("=")[0]!)
      : Object.keys(s.environment ?? {});
    for (const name of env) out.set(name, `infra/compose.yaml ${service}`);
  }
  return out;
}

/** The environment names of containers running our images in infra/k8s/*.yaml. */
function k8sNames(): Map<string, string> {
  const out = new Map<string, string>();
  const dir = join(ROOT, "infra/k8s");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
    for (const part of readFileSync(join(dir, file), "utf8").split(/^---$/m)) {
      const doc = Bun.YAML.parse(part) as any;
      for (const c of doc?.spec?.template?.spec?.containers ?? []) {
        if (!String(c.image).includes("/site/")) continue;
        for (const e of c.env ?? []) out.set(e.name, `infra/k8s/${file} ${c.name}`);
      }
    }
  }
  return out;
}

/** The `ENV` names of our Dockerfiles. */
function dockerfileNames(): Map<string, string> {
  const out = new Map<string, string>();
  const dir = join(ROOT, "infra/docker");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".Dockerfile"))) {
    const text = readFileSync(join(dir, file), "utf8").replace(/\\\n/g, " ");
    for (const line of text.split("\n").filter((l) => l.startsWith("ENV ")))
      for (const m of line.slice(4).matchAll(/([A-Z][A-Z0-9_]*)=/g)) out.set(m[1]!, `infra/docker/${file}`);
  }
  return out;
}

describe("every setting in the deployment files is one the service reads and documents", () => {
  const names = new Set(SETTINGS.map((s) => s.name));
  const known = (name: string) => names.has(name);
  const example = read(".env.example");
  const documented = (name: string) => new RegExp(`^#?\\s*${name}=`, "m").test(example);
  const used = new Map([...dockerfileNames(), ...composeNames(), ...k8sNames()]);

  test("the deployment files name settings at all (the parsers found them)", () => {
    expect(names.size).toBeGreaterThan(30);
    expect(composeNames().size).toBeGreaterThan(10);
    expect(k8sNames().size).toBeGreaterThan(3);
    expect(used.has("S3_PUBLIC_ENDPOINT")).toBe(true);
  });

  test("each exists in libs/config", () => {
    const unknown = [...used].filter(([n]) => !PLATFORM.has(n) && !known(n)).map(([n, w]) => `${n} (${w})`);
    expect(unknown).toEqual([]);
  });

  test("each is in .env.example", () => {
    const missing = [...used]
      .filter(([n]) => !PLATFORM.has(n) && !documented(n))
      .map(([n, w]) => `${n} (${w})`);
    expect(missing).toEqual([]);
  });
});
