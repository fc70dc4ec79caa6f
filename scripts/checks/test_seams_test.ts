import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, normalize } from "node:path";

// Test seams that stay in product types (decision 1551) are set only by tests: product code may declare
// them, read them and pass them on, never give them a value of its own.
const ROOT = normalize(join(import.meta.dir, "../.."));
const SEAMS = ["fetchTls"];

/** Product source files: under apps/ and libs/, not tests, not test support. */
function productFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      if (name === "node_modules" || name === "testing" || name.startsWith(".")) continue;
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith("_test.ts")) out.push(path);
    }
  };
  for (const dir of ["apps", "libs"]) walk(dir);
  return out;
}

/**
 * The places in `text` that give `seam` a value: `seam: <value>` in an object, `seam = …` or
 * `x.seam = …`. A declaration (`seam?: T`) and a forward (`seam: opts.seam`) are no value of its own.
 */
export function settings(text: string, seam: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(new RegExp(`(?<![\\w$])${seam}\\s*(\\?:|:|=(?!=))\\s*([^,;\\n}]*)`, "g"))) {
    if (m[1] === "?:") continue;
    if (m[1] === ":" && new RegExp(`^[\\w.]+\\.${seam}$`).test(m[2]!.trim())) continue;
    found.push(m[0].trim());
  }
  return found;
}

describe("test seams in product types", () => {
  test("the check finds a value given to a seam, and passes a declaration, a read and a forward", () => {
    expect(settings("const deps = { fetchTls: { ca: pem } };", "fetchTls")).toHaveLength(1);
    expect(settings("deps.fetchTls = loaded;", "fetchTls")).toHaveLength(1);
    expect(settings("if (deps.fetchTls === undefined) return;", "fetchTls")).toHaveLength(0);
    expect(settings("let fetchTls = { ca };", "fetchTls")).toHaveLength(1);
    expect(settings("  fetchTls?: { ca?: string | string[] };", "fetchTls")).toHaveLength(0);
    expect(settings("deliver(ctx, d, { fetchTls: opts.fetchTls });", "fetchTls")).toHaveLength(0);
    expect(settings("{ tls: deps.fetchTls }", "fetchTls")).toHaveLength(0);
  });

  test("no product code gives fetchTls a value (only tests and test support do)", () => {
    const files = productFiles();
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((f) => {
      const text = readFileSync(join(ROOT, f), "utf8");
      return SEAMS.flatMap((seam) => settings(text, seam).map((s) => `${f}: ${s}`));
    });
    expect(offenders).toEqual([]);
  });
});
