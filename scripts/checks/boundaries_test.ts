import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = normalize(join(import.meta.dir, "../.."));

/** Every .ts file under the workspace folders, as paths relative to the root. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      if (name === "node_modules" || name.startsWith(".")) continue;
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".ts")) out.push(path);
    }
  };
  for (const dir of ["apps", "libs", "scripts"]) walk(dir);
  return out;
}

/** The module specifiers a file imports or re-exports (static and dynamic). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s+(?:type\s+)?[\w*{}\s,]*?\s*from\s+"([^"]+)"/g))
    found.push(m[1]);
  for (const m of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)) found.push(m[1]);
  for (const m of text.matchAll(/^import\s+"([^"]+)"/gm)) found.push(m[1]);
  return found;
}

/** The unit a file belongs to: an app, a lib, a domain area, or scripts. A testing/ folder belongs to its package. */
export function unitOf(path: string): string {
  const parts = path.split("/");
  if (parts[0] === "libs" && parts[1] === "domain") return `libs/domain/${parts[2]}`;
  if (parts[0] === "apps" || parts[0] === "libs") return `${parts[0]}/${parts[1]}`;
  return "scripts";
}

const isTestSupport = (path: string) =>
  path.endsWith("_test.ts") || path.split("/").includes("testing") || path.startsWith("scripts/");

/** Which domain areas each area may import (docs/architecture.md#layering; decision 0008). */
const DOMAIN_AREAS: Record<string, string[]> = {
  core: [],
  // Webhooks: every area records its events in its own transactions (decision 0840).
  webhooks: ["core"],
  media: ["core", "webhooks"],
  // Content: MDX parsing, sanitizing, URL scanning and the HTML escaper; media references are read
  // with the media area's rules (decision 0040).
  content: ["core", "media"],
  sites: ["content", "core", "media", "webhooks"],
  // Clips are delivered into the social media library (decision 1220).
  screenshots: ["core", "media", "sites", "social", "webhooks"],
  social: ["core", "media", "webhooks"],
  newsletters: ["content", "core", "media", "sites", "webhooks"],
  testing: [],
};

/**
 * Which libs each lib's product code may import (docs/architecture.md#layering; decision 0041). The bottom layer
 * (config, db, net) imports no other lib; storage and queue stand on config; browser on config and net;
 * domain on those; runtime and the platform adapters (social) on domain. Test support may reach further
 * down or across (a domain test helper starts a runtime), never into an app.
 */
const LIB_LAYERS: Record<string, string[]> = {
  config: [],
  db: [],
  net: [],
  storage: ["config"],
  queue: ["config"],
  browser: ["config", "net"],
  domain: ["browser", "config", "db", "net", "queue", "storage"],
  runtime: ["config", "db", "domain", "queue", "storage"],
  social: ["config", "domain"],
};

/** The lib an `@site/...` specifier names (`@site/domain/sites` is domain), or null for an app or a package. */
export function libOf(spec: string): string | null {
  const m = /^@site\/([^/]+)/.exec(spec);
  if (!m || !existsSync(join(ROOT, "libs", m[1]))) return null;
  return m[1];
}

const files = sourceFiles();
const imports = files.flatMap((file) =>
  specifiers(readFileSync(join(ROOT, file), "utf8")).map((spec) => ({ file, spec })),
);

describe("package boundaries", () => {
  test("the scan sees the workspace (a guard against an empty pass)", () => {
    expect(files.length).toBeGreaterThan(150);
    expect(imports.some((i) => i.spec === "@site/domain/core")).toBe(true);
    // the old app-to-app import would have been caught: it leaves apps/api for apps/render-daemon
    expect(unitOf(relative(ROOT, join(ROOT, "apps/api/src", "../../render-daemon/src/login/mod.ts")))).toBe(
      "apps/render-daemon",
    );
  });

  test("no relative import crosses an app, a lib or a domain area: they go through @site/<name>", () => {
    const crossing = imports
      .filter((i) => i.spec.startsWith("."))
      .filter((i) => unitOf(relative(ROOT, join(ROOT, dirname(i.file), i.spec))) !== unitOf(i.file))
      .map((i) => `${i.file} -> ${i.spec}`);
    expect(crossing).toEqual([]);
  });

  test("a lib never imports an app", () => {
    const bad = imports
      .filter((i) => i.file.startsWith("libs/"))
      .filter((i) => /^@site\/(api|render-daemon|metrics)(\/|$)/.test(i.spec))
      .map((i) => `${i.file} -> ${i.spec}`);
    expect(bad).toEqual([]);
  });

  test("domain areas depend only in the allowed direction", () => {
    const bad: string[] = [];
    for (const i of imports) {
      const m = /^libs\/domain\/([^/]+)\//.exec(i.file);
      const target = /^@site\/domain\/([^/]+)$/.exec(i.spec);
      if (!m || !target || isTestSupport(i.file) || target[1] === m[1]) continue;
      if (!(DOMAIN_AREAS[m[1]] ?? []).includes(target[1])) bad.push(`${i.file} -> ${i.spec}`);
    }
    expect(Object.keys(DOMAIN_AREAS).sort()).toEqual(
      readdirSync(join(ROOT, "libs/domain"))
        .filter((n) => statSync(join(ROOT, "libs/domain", n)).isDirectory())
        .sort(),
    );
    expect(bad).toEqual([]);
  });

  test("libs depend on libs only in the layering's direction", () => {
    const bad: string[] = [];
    for (const i of imports) {
      const m = /^libs\/([^/]+)\//.exec(i.file);
      const target = libOf(i.spec);
      if (!m || !target || isTestSupport(i.file) || target === m[1]) continue;
      if (!(LIB_LAYERS[m[1]] ?? []).includes(target)) bad.push(`${i.file} -> ${i.spec}`);
    }
    expect(Object.keys(LIB_LAYERS).sort()).toEqual(
      readdirSync(join(ROOT, "libs"))
        .filter((n) => statSync(join(ROOT, "libs", n)).isDirectory())
        .sort(),
    );
    // the check bites: an upward import is named, and the layering has no cycle
    expect(libOf("@site/runtime")).toBe("runtime");
    expect(LIB_LAYERS.domain.includes("runtime")).toBe(false);
    const order: string[] = [];
    const place = (lib: string, seen: string[]) => {
      if (order.includes(lib)) return;
      expect(seen).not.toContain(lib);
      for (const dep of LIB_LAYERS[lib]!) place(dep, [...seen, lib]);
      order.push(lib);
    };
    for (const lib of Object.keys(LIB_LAYERS)) place(lib, []);
    expect(order.length).toBe(Object.keys(LIB_LAYERS).length);
    expect(bad).toEqual([]);
  });

  test("product code never imports test support, and no mod.ts exports it", () => {
    const bad = imports
      .filter((i) => !isTestSupport(i.file))
      .filter((i) => /^@site\/[^/]+(\/[^/]+)?\/testing$/.test(i.spec) || /(^|\/)testing(\/|$)/.test(i.spec))
      .map((i) => `${i.file} -> ${i.spec}`);
    expect(bad).toEqual([]);
  });

  test("no import cycle between files, type-only imports included (STYLE: no circular imports)", () => {
    // Relative imports only: a cycle across packages would already break the boundary rules above.
    const graph = new Map<string, string[]>();
    for (const i of imports) {
      if (!i.spec.startsWith(".")) continue;
      const target = relative(ROOT, join(ROOT, dirname(i.file), i.spec));
      graph.set(i.file, [...(graph.get(i.file) ?? []), target]);
    }
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles).toEqual([]);
  });
});
