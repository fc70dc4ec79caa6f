import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SOCIAL_PLATFORMS } from "@site/domain/social";

/**
 * `.env.example` is the newcomer's list of settings: every setting the config reads is in it, and it names
 * none the config does not read. The settings are found in libs/config's own source: `env.NAME`,
 * `env["NAME"]`, a setting helper called as `(env, "NAME", …)` or `list("NAME")`, and the per-platform
 * templates (`SOCIAL_API_BASE_${p.toUpperCase()}`) expanded for each platform.
 */
const ROOT = resolve(import.meta.dir, "../..");
const CONFIG = join(ROOT, "libs/config/src");

function settingsReadByConfig(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(CONFIG)) {
    if (!file.endsWith(".ts") || file.endsWith("_test.ts")) continue;
    const src = readFileSync(join(CONFIG, file), "utf8");
    for (const re of [
      /\benv\.([A-Z][A-Z0-9_]+)/g,
      /\benv\[\s*"([A-Z][A-Z0-9_]+)"\s*\]/g,
      /\(\s*env\s*,\s*"([A-Z][A-Z0-9_]+)"/g,
      /\blist\(\s*"([A-Z][A-Z0-9_]+)"/g,
    ])
      for (const m of src.matchAll(re)) names.add(m[1]!);
    for (const m of src.matchAll(/`([A-Z_]*)\$\{p\.toUpperCase\(\)\}([A-Z_]*)`/g))
      for (const p of SOCIAL_PLATFORMS) names.add(`${m[1]}${p.toUpperCase()}${m[2]}`);
  }
  return names;
}

describe(".env.example and the config read the same settings", () => {
  const read = settingsReadByConfig();
  const example = readFileSync(join(ROOT, ".env.example"), "utf8");
  const listed = new Set([...example.matchAll(/(?:^|\s)#?\s*([A-Z][A-Z0-9_]{2,})=/gm)].map((m) => m[1]!));

  test("the scan finds the config's settings (a parser that found none would pass anything)", () => {
    for (const known of [
      "PORT",
      "DATABASE_URL",
      "SMTP_HELO_NAME",
      "SOCIAL_API_BASE_TIKTOK",
      "WEBHOOK_TIMEOUT_MS",
    ])
      expect(read).toContain(known);
    expect(read.size).toBeGreaterThan(100);
  });

  test("every setting the config reads is in .env.example", () => {
    expect([...read].filter((n) => !listed.has(n)).sort()).toEqual([]);
  });

  test(".env.example names no setting the config does not read", () => {
    expect([...listed].filter((n) => !read.has(n)).sort()).toEqual([]);
  });
});
