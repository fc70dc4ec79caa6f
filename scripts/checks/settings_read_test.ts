import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { SETTINGS } from "@site/config";

/**
 * No setting is read outside the settings table (issue 37, decision 1520). Product code (apps, libs,
 * scripts; not tests, test support, benchmarks or the chaos run, whose knobs are their own parameters)
 * is scanned for reads of the environment: `process.env.NAME`, `Bun.env.NAME`, `env.NAME` of an
 * environment record, and `…Setting(env, "NAME")` (libs/config's readers). Each name must be declared in
 * libs/config/src/settings.ts, or be one of the operating system's variables below; a computed name
 * (`process.env[name]`) cannot be checked and is refused. loadConfig's own reads are checked at run
 * time too: its readers throw on an undeclared name (scripts/checks/env_example_test.ts).
 */
const ROOT = join(import.meta.dir, "..", "..");

/** Read from the operating system for what it is, never a setting of ours. */
const SYSTEM = new Set(["PATH"]);

const SKIP_DIRS = new Set(["node_modules", "testing", "bench", "chaos", ".data"]);

function productFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name)) productFiles(path, out);
    } else if (name.endsWith(".ts") && !name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

type Read = { name: string; where: string };

/** Every environment read of `source`, by name, and every read whose name is computed. */
export function envReads(source: string, where: string): { reads: Read[]; computed: string[] } {
  const reads: Read[] = [];
  const computed: string[] = [];
  const lineOf = (i: number) => `${where}:${source.slice(0, i).split("\n").length}`;
  for (const re of [
    /\b(?:process\.env|Bun\.env)\??\.([A-Z][A-Z0-9_]*)/g,
    /\b(?:process\.env|Bun\.env)\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\]/g,
    /(?<![\w.$])env\??\.([A-Z][A-Z0-9_]*)\b/g,
    /(?<![\w.$])env\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\]/g,
    /\w+Setting\(\s*(?:process\.)?env\s*,\s*"([A-Z][A-Z0-9_]*)"/g,
  ])
    for (const m of source.matchAll(re)) reads.push({ name: m[1]!, where: lineOf(m.index!) });
  for (const m of source.matchAll(/\b(?:process\.env|Bun\.env)\[\s*(?!["'`][A-Z][A-Z0-9_]*["'`]\s*\])/g))
    computed.push(lineOf(m.index!));
  return { reads, computed };
}

describe("every setting read is declared in the settings table", () => {
  const declared = new Set(SETTINGS.map((s) => s.name));
  const files = ["apps", "libs", "scripts"].flatMap((d) => productFiles(join(ROOT, d)));
  const all = files.map((f) => envReads(readFileSync(f, "utf8"), relative(ROOT, f)));
  const reads = all.flatMap((x) => x.reads);

  test("the scan finds the reads there are (a scan that found none would pass anything)", () => {
    expect(files.length).toBeGreaterThan(100);
    const names = new Set(reads.map((r) => r.name));
    // scripts/admin.ts and libs/runtime's public base read PUBLIC_BASE_URL; webhook_settings its own.
    for (const known of ["PUBLIC_BASE_URL", "WEBHOOK_TIMEOUT_MS", "SMTP_HELO_NAME", "PATH"])
      expect(names).toContain(known);
  });

  test("no read of a name the table does not declare", () => {
    const undeclared = reads.filter((r) => !declared.has(r.name) && !SYSTEM.has(r.name));
    expect(undeclared.map((r) => `${r.name} (${r.where})`)).toEqual([]);
  });

  test("no read of a computed name outside the readers", () => {
    expect(all.flatMap((x) => x.computed)).toEqual([]);
  });

  test("the scan bites: an undeclared read and a computed one are found", () => {
    const { reads, computed } = envReads(
      'const a = process.env.SURELY_NOT_DECLARED;\nconst b = Bun.env[name];\nconst c = intSetting(env, "ALSO_NOT");',
      "probe.ts",
    );
    expect(reads.map((r) => r.name)).toEqual(["SURELY_NOT_DECLARED", "ALSO_NOT"]);
    expect(computed).toEqual(["probe.ts:2"]);
  });
});
